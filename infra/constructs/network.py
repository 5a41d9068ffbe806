"""Network: a VPC with isolated subnets for data and for the functions; AWS APIs through interface
endpoints instead of a NAT gateway.

Aurora's subnet group must span two availability zones even for one instance, so the VPC always has
two. The `small` profile uses one of them for everything that costs by the hour per zone (the
functions' network interfaces and the interface endpoints); `prod` uses both.
Only the Anthropic API (when chosen over Bedrock) needs the internet: then, and only then, public
subnets and NAT gateways (one in `small`, one per zone in `prod`) give the functions a way out.
"""

from __future__ import annotations

from aws_cdk import aws_ec2 as ec2
from constructs import Construct

from infra.config import Deployment

AVAILABILITY_ZONES = 2
HTTPS = 443
# What the functions call: Step Functions (start executions), Secrets Manager (database credentials),
# Bedrock Runtime (models), X-Ray (trace segments from the SDK inside the VPC).
ENDPOINT_SERVICES = {
    "StepFunctions": ec2.InterfaceVpcEndpointAwsService.STEP_FUNCTIONS,
    "SecretsManager": ec2.InterfaceVpcEndpointAwsService.SECRETS_MANAGER,
    "BedrockRuntime": ec2.InterfaceVpcEndpointAwsService.BEDROCK_RUNTIME,
    "XRay": ec2.InterfaceVpcEndpointAwsService.XRAY,
}


class Network(Construct):
    def __init__(self, scope: Construct, id: str, *, deployment: Deployment) -> None:
        super().__init__(scope, id)
        egress = deployment.internet_egress
        subnets = [
            ec2.SubnetConfiguration(name="compute", cidr_mask=22, subnet_type=(
                ec2.SubnetType.PRIVATE_WITH_EGRESS if egress else ec2.SubnetType.PRIVATE_ISOLATED)),
            ec2.SubnetConfiguration(name="data", subnet_type=ec2.SubnetType.PRIVATE_ISOLATED, cidr_mask=24),
        ]
        if egress:
            subnets.append(ec2.SubnetConfiguration(name="public", subnet_type=ec2.SubnetType.PUBLIC, cidr_mask=26))
        self.vpc = ec2.Vpc(self, "Vpc", max_azs=AVAILABILITY_ZONES, subnet_configuration=subnets,
                           nat_gateways=(AVAILABILITY_ZONES if deployment.prod else 1) if egress else 0)
        self.vpc.add_flow_log("FlowLog")
        compute = self.vpc.select_subnets(subnet_group_name="compute").subnets
        # small: one zone for the functions and endpoints (each endpoint costs by the hour per zone).
        self.compute_subnets = ec2.SubnetSelection(subnets=compute if deployment.prod else compute[:1])
        self.data_subnets = ec2.SubnetSelection(subnet_group_name="data")
        self.functions_sg = ec2.SecurityGroup(self, "FunctionsSg", vpc=self.vpc, description="engram functions")
        self.endpoints_sg = ec2.SecurityGroup(self, "EndpointsSg", vpc=self.vpc, description="interface endpoints",
                                              allow_all_outbound=False)
        self.allow_aws_apis(self.functions_sg, "functions to AWS APIs")
        for name, service in ENDPOINT_SERVICES.items():
            self.vpc.add_interface_endpoint(name, service=service, subnets=self.compute_subnets,
                                            security_groups=[self.endpoints_sg], private_dns_enabled=True)

    def allow_aws_apis(self, clients: ec2.ISecurityGroup, description: str) -> None:
        """Admit a security group to the interface endpoints (HTTPS only)."""
        self.endpoints_sg.add_ingress_rule(clients, ec2.Port.tcp(HTTPS), description)
