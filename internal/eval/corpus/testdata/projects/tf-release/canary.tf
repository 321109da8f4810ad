# The canary gets one replica of the first canary service, on the next port up.
locals {
  canary_name = var.canary_services[0]
  canary_port = var.services[local.canary_name].port + 100
}

resource "terraform_data" "canary" {
  input = {
    service = local.canary_name
    image   = local.image_tags[local.canary_name]
    port    = local.canary_port
  }
}
