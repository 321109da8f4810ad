#!/usr/bin/env bash
# Deploys the reports API: scripts/deploy.sh ENVIRONMENT
set -eo pipefail

env=${1:?usage: deploy.sh ENVIRONMENT}
config="config/${env}.json"
echo "deploying reports-api to ${env}"

if [[ ! -f $config ]]; then
  echo "no config for ${env}: ${config}" >&2
  exit 1
fi

image=$(jqq -r '.image' "$config")
replicas=$(jq -r '.replicas' "$config")
echo "image=${image} replicas=${replicas}"
echo "rolling out..."
