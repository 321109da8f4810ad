output "zone_serial" {
  value = terraform_data.zone_serial.output
}
