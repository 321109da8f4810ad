terraform {
  required_version = ">= 1.6"
}

module "dns" {
  source = "./modules/dns"
  zone   = "shop.local"
  records = {
    api = "10.40.1.10"
    web   = "10.40.1.11"
    search= "10.40.1.12"
  }
}

resource "terraform_data" "zone_serial" {
    input = module.dns.serial
    triggers = [module.dns.serial]
}
