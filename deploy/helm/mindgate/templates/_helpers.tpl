{{- define "mindgate.fullname" -}}{{ .Release.Name }}-mindgate{{- end -}}
{{- define "mindgate.labels" -}}
app.kubernetes.io/name: mindgate
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end -}}
{{- define "mindgate.tokenSecret" -}}
{{- if .Values.internalToken.existingSecret -}}{{ .Values.internalToken.existingSecret }}{{- else -}}{{ include "mindgate.fullname" . }}-internal{{- end -}}
{{- end -}}
{{- define "mindgate.keyEncryptionSecret" -}}
{{- if .Values.keyEncryption.existingSecret -}}{{ .Values.keyEncryption.existingSecret }}{{- else -}}{{ include "mindgate.fullname" . }}-key-encryption{{- end -}}
{{- end -}}
{{- /* The settings every process reads from the ConfigMap (config.yaml) and the Secrets. */ -}}
{{- define "mindgate.commonEnv" -}}
- name: INTERNAL_TOKEN
  valueFrom: { secretKeyRef: { name: {{ include "mindgate.tokenSecret" . }}, key: INTERNAL_TOKEN } }
- name: MONGODB_URL
  valueFrom: { secretKeyRef: { name: {{ .Values.mongodb.existingSecret }}, key: MONGODB_URL } }
{{- if .Values.qdrant.existingSecret }}
- name: QDRANT_API_KEY
  valueFrom: { secretKeyRef: { name: {{ .Values.qdrant.existingSecret }}, key: QDRANT_API_KEY } }
{{- end }}
{{- end -}}
{{- /*
SIGTERM comes after the preStop sleep; the process then drains for up to SHUTDOWN_GRACE_MS. The
kubelet kills the container terminationGracePeriodSeconds after it started stopping it, so that
period holds the sleep, the drain (rounded up to seconds) and a margin for closing the stores.
*/ -}}
{{- define "mindgate.terminationGracePeriodSeconds" -}}
{{- add (int .Values.preStopSleepSeconds) (div (add (int .Values.shutdownGraceMs) 999) 1000) (int .Values.terminationMarginSeconds) -}}
{{- end -}}
{{- /* Pod-level hardening: the image's `node` user (uid and gid 1000), the runtime's seccomp profile. */ -}}
{{- define "mindgate.podSecurity" -}}
automountServiceAccountToken: false
enableServiceLinks: false
terminationGracePeriodSeconds: {{ include "mindgate.terminationGracePeriodSeconds" . }}
securityContext:
  runAsNonRoot: true
  runAsUser: 1000
  runAsGroup: 1000
  # Group of the mounted Secret files (mode 0440) and of the writable volumes.
  fsGroup: 1000
  seccompProfile: { type: RuntimeDefault }
{{- end -}}
{{- define "mindgate.containerSecurity" -}}
securityContext:
  allowPrivilegeEscalation: false
  readOnlyRootFilesystem: true
  capabilities: { drop: [ALL] }
lifecycle:
  preStop:
    exec: { command: ["sleep", "{{ .Values.preStopSleepSeconds }}"] }
{{- end -}}
{{- /* The writable volumes under a read-only root file system. */ -}}
{{- define "mindgate.writableVolumes" -}}
- name: data
  emptyDir: { sizeLimit: {{ .Values.dataVolumeSizeLimit }} }
- name: tmp
  emptyDir: { sizeLimit: {{ .Values.tmpVolumeSizeLimit }} }
{{- end -}}
{{- define "mindgate.writableMounts" -}}
- { name: data, mountPath: /data }
- { name: tmp, mountPath: /tmp }
{{- end -}}
{{- /* A change of the settings or of a generated Secret changes the pod template, which rolls the pods. */ -}}
{{- define "mindgate.podAnnotations" -}}
checksum/config: {{ include (print .Template.BasePath "/config.yaml") . | sha256sum }}
checksum/secrets: {{ print (include (print .Template.BasePath "/internal-token.yaml") .) (include (print .Template.BasePath "/key-encryption.yaml") .) | sha256sum }}
{{- with .Values.podAnnotations }}
{{ toYaml . }}
{{- end }}
{{- end -}}
{{- define "mindgate.metricsPort" -}}
{{- if .Values.metrics.enabled }}
- { name: metrics, containerPort: {{ .Values.metrics.port }} }
{{- end }}
{{- end -}}
