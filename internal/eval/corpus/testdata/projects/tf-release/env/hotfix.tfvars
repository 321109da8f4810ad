release         = "2024.6-hotfix"
canary_services = []
