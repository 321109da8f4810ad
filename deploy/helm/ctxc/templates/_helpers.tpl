{{/* The chart's name, or nameOverride. */}}
{{- define "ctxc.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Objects' name: fullnameOverride, else <release>-ctxc (the release alone when it already says ctxc). */}}
{{- define "ctxc.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "ctxc.selectorLabels" -}}
app.kubernetes.io/name: {{ include "ctxc.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "ctxc.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "ctxc.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/component: context-compiler
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "ctxc.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "ctxc.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "ctxc.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}
{{- end }}

{{/* The Secret holding the token file. */}}
{{- define "ctxc.authSecretName" -}}
{{- .Values.auth.existingSecret | default (printf "%s-auth" (include "ctxc.fullname" .)) }}
{{- end }}

{{/*
The server's config file: the server values, the profiles, models and
registry, and the summary cache. Listen addresses, TLS, tokens and the drain
come from the environment the Deployment sets.
*/}}
{{- define "ctxc.config" -}}
{{- $config := deepCopy .Values.server }}
{{- with .Values.profiles }}{{ $_ := set $config "profiles" . }}{{ end }}
{{- with .Values.models }}{{ $_ := set $config "models" . }}{{ end }}
{{- with .Values.model_registry }}{{ $_ := set $config "model_registry" . }}{{ end }}
{{- $cache := dict "ttl" .Values.summaryCache.ttl "max_entries" .Values.summaryCache.maxEntries "key_prefix" .Values.summaryCache.keyPrefix }}
{{- with .Values.redis.url }}{{ $_ := set $cache "redis_url" . }}{{ end }}
{{- $_ := set $config "summary_cache" $cache }}
{{- toYaml $config }}
{{- end }}

{{/*
The health check of the three probes: the kubelet's own gRPC probe in
plaintext; with TLS, which that probe cannot speak, `ctxc health` in the
container (it reads CTXC_LISTEN and CTXC_TLS_* and probes 127.0.0.1).
*/}}
{{- define "ctxc.healthProbe" -}}
{{- if .Values.tls.enabled -}}
exec:
  command: ["/ctxc", "health", "--timeout", "2s"]
timeoutSeconds: 3
{{- else -}}
grpc:
  port: {{ .Values.ports.grpc }}
timeoutSeconds: 2
{{- end }}
{{- end }}
