variable "zone" {
  type = string
}

variable "records" {
  type = map(string)
}

locals {
  fqdns = { for name, ip in var.records : "${name}.${var.zone}" => ip }
  serial = formatdate("YYYYMMDD", "2024-06-01T00:00:00Z")
}

resource "terraform_data" "record" {
  for_each = local.fqdns
  input = {
    name = each.key
    type = "A"
    value = each.value
    ttl = 300
  }

  lifecycle {
    create_before_destroy = true
    ignore_change = [input]
  }
}

output "serial" {
  value = local.serial
}
