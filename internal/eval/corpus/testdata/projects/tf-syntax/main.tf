terraform {
  required_version = ">= 1.6"
}

variable "release" {
  type    = string
  default = "2024.06.1"
}

locals {
  services = ["orders", "billing", "search"]
  image_tags = {
    for s in local.services : s => "${s}:${var.release}"
  }
}

resource "terraform_data" "deploy" {
  for_each = local.image_tags

  input = {
    service = each.key
    image   = each.value
    replicas = each.key == "orders" ? 3 : 1
  }

  lifecycle {
    replace_triggered_by = [terraform_data.release]
  }
}

resource "terraform_data" "release" {
  input = var.release
  triggers_replace {
    release = var.release
  }
