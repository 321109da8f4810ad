locals {
  name_prefix = "shop-${var.environment}"
  subnets = {
    for i, zone in var.zones : zone => cidrsubnet(var.cidr_block, 8, i)
  }
}

# Stands in for the VPC until the provider is wired up.
resource "terraform_data" "vpc" {
  input = {
    name = "${local.name_prefix}-vpc"
    cidr = var.cidr_block
    tags = var.common_tags
  }
}

resource "terraform_data" "subnet" {
  for_each = local.subnets

  input = {
    name = "${local.name_prefix}-${each.key}"
    cidr = each.value
    vpc  = terraform_data.vpc.output.name
  }
  triggers = [terraform_data.vpc.id]
}

resource "terraform_data" "nat" {
  input = {
    subnet = terraform_data.subnets["eu-west-1a"].output.name
  }
}
