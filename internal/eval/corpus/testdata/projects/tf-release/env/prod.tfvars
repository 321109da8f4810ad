release         = "2024.06.2"
canary_services = ["checkout"]
