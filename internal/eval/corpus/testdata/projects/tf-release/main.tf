terraform {
  required_version = ">= 1.6"
}

variable "release" {
  type        = string
  description = "Release tag, YYYY.MM.N"
  default     = "2024.06.1"

  validation {
    condition     = can(regex("^[0-9]{4}\\.[0-9]{2}\\.[0-9]+$", var.release))
    error_message = "The release must look like 2024.06.1 (year.month.number)."
  }
}

variable "services" {
  type = map(object({
    replicas = number
    port     = number
  }))
  default = {
    orders  = { replicas = 3, port = 8080 }
    billing = { replicas = 2, port = 8081 }
    search  = { replicas = 1, port = 8082 }
  }
}

variable "canary_services" {
  type    = list(string)
  default = ["orders"]
}

locals {
  image_tags = { for name, svc in var.services : name => "registry.shop.local/${name}:${var.release}" }
  total_replicas = sum([for svc in values(var.services) : svc.replicas])
}

resource "terraform_data" "release" {
  input = var.release
}

resource "terraform_data" "deploy" {
  for_each = var.services

  input = {
    service  = each.key
    image    = local.image_tags[each.key]
    replicas = each.value.replicas
    port     = each.value.port
    canary   = contains(var.canary_services, each.key)
  }

  lifecycle {
    replace_triggered_by = [terraform_data.release]
  }
}

output "images" {
  value = local.image_tags
}

output "total_replicas" {
  value = local.total_replicas
}
