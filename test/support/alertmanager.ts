// Alertmanager's webhook notifications (payload version 4) as its webhook notifier sends them, for
// the tests of alert intake: a test names the group, the status and what it says of each alert;
// the rest of the envelope is what Alertmanager always sends.

/** One alert of a notification. */
export interface NotifiedAlert {
  fingerprint: string;
  labels: Record<string, string>;
  annotations?: Record<string, string>;
  /** 2026-03-02T09:30:00.000Z unless told. */
  startsAt?: string;
  /** Alertmanager's zero time (the alert has not ended) unless told. */
  endsAt?: string;
  /** Prometheus's graph page unless told. */
  generatorURL?: string;
}

export interface AlertmanagerNotification {
  groupKey: string;
  /** Of the group, and of each alert in it: firing unless told. */
  status?: 'firing' | 'resolved';
  alerts: NotifiedAlert[];
  groupLabels?: Record<string, string>;
  commonLabels?: Record<string, string>;
}

/** The notification's JSON body. */
export function alertmanagerNotification(notification: AlertmanagerNotification) {
  const status = notification.status ?? 'firing';
  return {
    receiver: 'mindgate',
    status,
    alerts: notification.alerts.map((alert) => ({
      status,
      labels: alert.labels,
      annotations: alert.annotations ?? {},
      startsAt: alert.startsAt ?? '2026-03-02T09:30:00.000Z',
      endsAt: alert.endsAt ?? '0001-01-01T00:00:00Z',
      generatorURL: alert.generatorURL ?? 'http://prometheus:9090/graph',
      fingerprint: alert.fingerprint,
    })),
    groupLabels: notification.groupLabels ?? {},
    commonLabels: notification.commonLabels ?? {},
    commonAnnotations: {},
    externalURL: 'http://alertmanager:9093',
    version: '4',
    groupKey: notification.groupKey,
    truncatedAlerts: 0,
  };
}

/** The notification as the bytes of a request body (AlertsService.ReceiveAlerts's payload). */
export function alertmanagerPayload(notification: AlertmanagerNotification): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(alertmanagerNotification(notification)));
}
