{{/* vim: set filetype=mustache: */}}

{{/* Chart name, overridable with nameOverride. */}}
{{- define "rollout.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Full name: "<release>-<chart>", or "<release>" when the release name already contains the chart name.
Truncated to 63 characters (DNS label); the longest suffix used is "-headless" (9), so names derived
from it are truncated again where they are built.
*/}}
{{- define "rollout.fullname" -}}
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

{{/* "<fullname>-<suffix>", truncated to a DNS label. Usage: include "rollout.suffixed" (list . "headless") */}}
{{- define "rollout.suffixed" -}}
{{- $ctx := index . 0 }}
{{- $suffix := index . 1 }}
{{- printf "%s-%s" (include "rollout.fullname" $ctx | trunc (int (sub 62 (len $suffix))) | trimSuffix "-") $suffix }}
{{- end }}

{{- define "rollout.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Recommended labels on every object. */}}
{{- define "rollout.labels" -}}
helm.sh/chart: {{ include "rollout.chart" . }}
{{ include "rollout.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | trunc 63 | trimSuffix "-" | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: rollout
{{- end }}

{{/* Selector labels (immutable on a Deployment: never add to these). */}}
{{- define "rollout.selectorLabels" -}}
app.kubernetes.io/name: {{ include "rollout.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: server
{{- end }}

{{- define "rollout.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "rollout.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "rollout.image" -}}
{{- $tag := .Values.image.tag | default .Chart.AppVersion }}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository $tag }}
{{- end }}
{{- end }}

{{- define "rollout.adminTokenSecretName" -}}
{{- .Values.adminToken.existingSecret | default (include "rollout.suffixed" (list . "admin-token")) }}
{{- end }}

{{- define "rollout.modelClaimName" -}}
{{- if .Values.model.volume.pvc.create }}
{{- include "rollout.suffixed" (list . "model") }}
{{- else }}
{{- required "model.volume.type is \"pvc\": set model.volume.pvc.existingClaim (or pvc.create: true)" .Values.model.volume.pvc.existingClaim }}
{{- end }}
{{- end }}

{{/* Port the kubelet's gRPC probes use: the plaintext health port when TLS is on (probes cannot do TLS). */}}
{{- define "rollout.probePort" -}}
{{- if .Values.tls.enabled }}{{ .Values.ports.health }}{{ else }}{{ .Values.ports.grpc }}{{ end }}
{{- end }}

{{/* Seconds the preStop hook takes before SIGTERM (only the sleep hook has a known duration). */}}
{{- define "rollout.preStopSeconds" -}}
{{- if eq .Values.drain.preStop.type "sleep" }}{{ int .Values.drain.preStop.sleepSeconds }}{{ else }}0{{ end }}
{{- end }}

{{- define "rollout.terminationGracePeriodSeconds" -}}
{{- $min := add (int (include "rollout.preStopSeconds" .)) (int .Values.drain.timeoutSeconds) }}
{{- if kindIs "invalid" .Values.terminationGracePeriodSeconds }}
{{- add $min 30 }}
{{- else }}
{{- if lt (int .Values.terminationGracePeriodSeconds) (int $min) }}
{{- fail (printf "terminationGracePeriodSeconds (%d) is shorter than the preStop sleep + drain.timeoutSeconds (%d): in-flight rollouts would be killed" (int .Values.terminationGracePeriodSeconds) (int $min)) }}
{{- end }}
{{- int .Values.terminationGracePeriodSeconds }}
{{- end }}
{{- end }}

{{/*
=====================================================================================================
 values -> server config: rollout.v1.ServerConfig (proto/rollout/v1/config.proto) as proto3 JSON
 (rolloutd --config=<file>.json; unknown fields are errors).
 THIS IS THE ONE PLACE WHERE CHART VALUES BECOME SERVER CONFIG FIELD NAMES.

 Precedence (lowest first):
   1. chart defaults that users may override in config.server:  workers.count, shutdown_grace_seconds
   2. .Values.config.server (verbatim ServerConfig fields, deep-merged)
   3. fields coupled to the pod spec (ports, mounted file paths): always the chart's
 ServerConfig field                     <- value
   listen                               <- "0.0.0.0:" + ports.grpc
   metrics_listen                       <- "0.0.0.0:" + ports.metrics
   model.path                           <- model.path                  (omitted when empty: embedded model)
   workers.count                        <- gpu.count, at least 1       (default; worker i gets cuda:i or the CPU)
   shutdown_grace_seconds               <- drain.timeoutSeconds        (default)
   security.admin_token_file            <- adminToken.mountPath/secretKey      (adminToken.enabled)
   security.tls.cert_file               <- tls.mountPath/certKey               (tls.enabled)
   security.tls.key_file                <- tls.mountPath/keyKey                (tls.enabled)
   security.tls.client_ca_file          <- tls.clientCA.mountPath/key          (tls.clientCA.enabled)
   security.tls.require_client_cert     <- tls.clientCA.require                (tls.clientCA.enabled)
   health_listen                        <- "0.0.0.0:" + ports.health           (tls.enabled)
     kubelet's gRPC probes cannot speak TLS, so a TLS deployment gets a plaintext listener that
     serves only grpc.health.v1 (same statuses as the TLS port); the probes use it.
=====================================================================================================
*/}}
{{- define "rollout.serverConfig" -}}
{{- $v := .Values -}}
{{- $defaults := dict
      "workers" (dict "count" (max 1 (int $v.gpu.count)))
      "shutdown_grace_seconds" (int $v.drain.timeoutSeconds) -}}
{{- $coupled := dict
      "listen" (printf "0.0.0.0:%d" (int $v.ports.grpc))
      "metrics_listen" (printf "0.0.0.0:%d" (int $v.ports.metrics)) -}}
{{- $security := dict }}
{{- if $v.adminToken.enabled }}
{{- $_ := set $security "admin_token_file" (printf "%s/%s" $v.adminToken.mountPath $v.adminToken.secretKey) }}
{{- end }}
{{- if $v.tls.enabled }}
{{- $_ := set $coupled "health_listen" (printf "0.0.0.0:%d" (int $v.ports.health)) }}
{{- $tls := dict
      "cert_file" (printf "%s/%s" $v.tls.mountPath $v.tls.certKey)
      "key_file" (printf "%s/%s" $v.tls.mountPath $v.tls.keyKey) }}
{{- if $v.tls.clientCA.enabled }}
{{- $_ := set $tls "client_ca_file" (printf "%s/%s" $v.tls.clientCA.mountPath $v.tls.clientCA.key) }}
{{- $_ := set $tls "require_client_cert" (ternary true false $v.tls.clientCA.require) }}
{{- end }}
{{- $_ := set $security "tls" $tls }}
{{- end }}
{{- if $security }}
{{- $_ := set $coupled "security" $security }}
{{- end }}
{{- if $v.model.path }}
{{- $_ := set $coupled "model" (dict "path" $v.model.path) }}
{{- end }}
{{- $cfg := mustMergeOverwrite $defaults (deepCopy ($v.config.server | default dict)) $coupled -}}
{{- toPrettyJson $cfg }}
{{- end }}
