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
{{- define "mindgate.commonEnv" -}}
- name: LOG_LEVEL
  value: {{ .Values.logLevel | quote }}
- name: INTERNAL_TOKEN
  valueFrom: { secretKeyRef: { name: {{ include "mindgate.tokenSecret" . }}, key: INTERNAL_TOKEN } }
- name: MONGODB_URL
  valueFrom: { secretKeyRef: { name: {{ .Values.mongodb.existingSecret }}, key: MONGODB_URL } }
- name: QDRANT_URL
  value: {{ .Values.qdrant.url | quote }}
{{- if .Values.qdrant.existingSecret }}
- name: QDRANT_API_KEY
  valueFrom: { secretKeyRef: { name: {{ .Values.qdrant.existingSecret }}, key: QDRANT_API_KEY } }
{{- end }}
- name: EMBEDDINGS_PROVIDER
  value: {{ .Values.embeddings.provider | quote }}
- name: EMBEDDINGS_THREADS
  value: {{ .Values.embeddings.threads | quote }}
{{- if .Values.embeddings.url }}
- name: EMBEDDINGS_URL
  value: {{ .Values.embeddings.url | quote }}
{{- end }}
{{- if .Values.embeddings.model }}
- name: EMBEDDINGS_MODEL
  value: {{ .Values.embeddings.model | quote }}
{{- end }}
{{- end -}}
