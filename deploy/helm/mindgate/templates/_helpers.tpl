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
{{- /*
Which internal service each component calls, by component name. A service in a caller's list gets
its address (`<NAME>_SERVICE_ADDR`) in the caller's pod, and its NetworkPolicy admits the caller's
pods: one table for both, so a call the chart wires is never one the policy blocks. A service left
out here would run that service's code in its own process instead (services/common/run-service.ts).
*/ -}}
{{- define "mindgate.calls" -}}
edge: [brain, entity-graph, agents, billing]
# Memory limits from billing; memory writes told to the graph (services/brain/graph-sync.ts).
brain: [billing, entity-graph]
# Member and run limits from billing; scheduled jobs' seeding targets start runs of the brain's
# SeedingService.
agents: [billing, brain]
# Asks no other service (the edge checks the plan's entity_graph entitlement).
entity-graph: []
billing: []
{{- end -}}
{{- /* Each service's component name, its key under .Values.services and its address variable. */ -}}
{{- define "mindgate.serviceTable" -}}
brain: { key: brain, addr: BRAIN_SERVICE_ADDR, port: BRAIN_GRPC_PORT }
entity-graph: { key: entityGraph, addr: ENTITY_GRAPH_SERVICE_ADDR, port: ENTITY_GRAPH_GRPC_PORT }
agents: { key: agents, addr: AGENTS_SERVICE_ADDR, port: AGENTS_GRPC_PORT }
billing: { key: billing, addr: BILLING_SERVICE_ADDR, port: BILLING_GRPC_PORT }
{{- end -}}
{{- /* The *_SERVICE_ADDR variables of a component (dict "root" . "component" name). */ -}}
{{- define "mindgate.serviceAddrEnv" -}}
{{- $root := .root -}}
{{- $table := include "mindgate.serviceTable" $root | fromYaml -}}
{{- range $callee := index (include "mindgate.calls" $root | fromYaml) .component }}
{{- $svc := index $table $callee }}
- { name: {{ $svc.addr }}, value: "{{ include "mindgate.fullname" $root }}-{{ $callee }}:{{ (index $root.Values.services $svc.key).port }}" }
{{- end }}
{{- end -}}
{{- /* The components whose pods call a service (dict "root" . "component" name). */ -}}
{{- define "mindgate.callersOf" -}}
{{- $target := .component -}}
{{- $callers := list -}}
{{- range $caller, $callees := include "mindgate.calls" .root | fromYaml }}
{{- if has $target $callees }}{{ $callers = append $callers $caller }}{{ end }}
{{- end }}
{{- toYaml (sortAlpha $callers) -}}
{{- end -}}
{{- /*
The processes that load the key-encryption key: the edge (the authorization server's keys and
client secrets) and the agents service (webhook signing secrets, alert source secrets). Without
the file, a process generates a key of its own in DATA_DIR, an emptyDir here: what one pod sealed,
another (or its replacement) cannot open. test/integration/helm.test.ts starts every pod's process
as rendered and fails if any generates a secret.
*/ -}}
{{- define "mindgate.usesKeyEncryption" -}}
{{- has . (list "edge" "agents") -}}
{{- end -}}
{{- define "mindgate.keyEncryptionVolumes" -}}
- name: key-encryption
  secret: { secretName: {{ include "mindgate.keyEncryptionSecret" . }}, defaultMode: 0440, items: [{ key: key-encryption-key, path: key-encryption-key }] }
{{- if .Values.keyEncryption.previousSecret }}
- name: key-encryption-previous
  secret: { secretName: {{ .Values.keyEncryption.previousSecret }}, defaultMode: 0440, items: [{ key: key-encryption-key, path: key-encryption-key }] }
{{- end }}
{{- end -}}
{{- define "mindgate.keyEncryptionEnv" -}}
- { name: KEY_ENCRYPTION_KEY_FILE, value: /etc/mindgate/key-encryption/key-encryption-key }
{{- if .Values.keyEncryption.previousSecret }}
- { name: KEY_ENCRYPTION_KEY_PREVIOUS_FILE, value: /etc/mindgate/key-encryption-previous/key-encryption-key }
{{- end }}
{{- end -}}
{{- define "mindgate.keyEncryptionMounts" -}}
- { name: key-encryption, mountPath: /etc/mindgate/key-encryption, readOnly: true }
{{- if .Values.keyEncryption.previousSecret }}
- { name: key-encryption-previous, mountPath: /etc/mindgate/key-encryption-previous, readOnly: true }
{{- end }}
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
