#!/usr/bin/env bash
# Records the `terraform` family: terraform init/validate/fmt/plan on configurations that
# use no provider but the built-in terraform_data resource (no registry is reachable).
#
# Needs: terraform (1.11 here).
# Run:   bash internal/eval/corpus/record/terraform.sh
# Most commands pass -no-color, as agents are told to; the syntax-error case does not, so
# it keeps the ANSI colours and the diagnostic box terraform draws only in colour.
source "$(dirname "$0")/lib.sh"

# An empty CLI configuration (so no "Unable to open CLI configuration file" warning from
# a TF_CLI_CONFIG_FILE that points nowhere) and no version check over the network.
mkdir -p "$CTXC_CORPUS_WORKDIR/terraform-home"
: >"$CTXC_CORPUS_WORKDIR/terraform-home/terraformrc"
export TF_CLI_CONFIG_FILE="$CTXC_CORPUS_WORKDIR/terraform-home/terraformrc"
export CHECKPOINT_DISABLE=1
unset TF_LOG TF_IN_AUTOMATION TF_INPUT TF_CLI_ARGS TF_PLUGIN_CACHE_DIR TF_DATA_DIR

V="terraform version | sed -n 1p"

# tf-network: init, then validate finds undeclared references.
record terraform init-ok tf-network terraform "$V" -- terraform init -no-color
CTXC_CORPUS_KEEP=1 record terraform validate-undeclared tf-network terraform "$V" -- terraform validate -no-color

# tf-syntax: an unclosed block, in colour.
record terraform init-syntax-error-color tf-syntax terraform "$V" -- terraform init

# tf-fmt: a lifecycle typo in a module stops init; fmt finds two unformatted files.
record terraform init-unsupported-argument tf-fmt terraform "$V" -- terraform init -no-color
record terraform fmt-check tf-fmt terraform "$V" -- terraform fmt -check -recursive
record terraform fmt-check-diff tf-fmt terraform "$V" -- terraform fmt -check -diff -recursive -no-color

# tf-release: a plan that succeeds, then two var files that break it.
fresh_project tf-release
(cd "$CTXC_CORPUS_WORKDIR/tf-release" && terraform init -input=false -no-color >/dev/null)
export CTXC_CORPUS_KEEP=1
record terraform validate-ok tf-release terraform "$V" -- terraform validate -no-color
record terraform plan-ok tf-release terraform "$V" -- terraform plan -no-color
record terraform plan-invalid-index tf-release terraform "$V" -- terraform plan -no-color -var-file=env/prod.tfvars
record terraform plan-var-validation tf-release terraform "$V" -- terraform plan -no-color -var-file=env/hotfix.tfvars
unset CTXC_CORPUS_KEEP

refresh_labels terraform
