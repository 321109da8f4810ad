variable "environment" {
  type        = string
  description = "Deployment environment: dev, staging or prod."
}

variable "cidr_block" {
  type    = string
  default = "10.40.0.0/16"
}

variable "zones" {
  type    = list(string)
  default = ["eu-west-1a", "eu-west-1b", "eu-west-1c"]
}
