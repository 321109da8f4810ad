output "vpc_name" {
  value = terraform_data.vpc.output.name
}

output "subnet_cidrs" {
  value = { for zone, s in terraform_data.subnet : zone => s.output.cidr }
}

output "nat_subnet" {
  value = terraform_data.nat.output.subnet
}
