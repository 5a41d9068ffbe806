"""Network: a VPC with isolated subnets for data and for the functions, endpoints instead of NAT."""

from __future__ import annotations

from aws_cdk import aws_ec2 as ec2
from constructs import Construct

MAX_AZS = 2
ENDPOINT_SERVICES = {
    "StepFunctions": ec2.InterfaceVpcEndpointAwsService.STEP_FUNCTIONS,
    "SecretsManager": ec2.InterfaceVpcEndpointAwsService.SECRETS_MANAGER,
    "BedrockRuntime": ec2.InterfaceVpcEndpointAwsService.BEDROCK_RUNTIME,
    "XRay": ec2.InterfaceVpcEndpointAwsService.XRAY,
}


class Network(Construct):
    def __init__(self, scope: Construct, id: str) -> None:
        super().__init__(scope, id)
        self.vpc = ec2.Vpc(
            self, "Vpc", max_azs=MAX_AZS, nat_gateways=0,
            subnet_configuration=[
                ec2.SubnetConfiguration(name="compute", subnet_type=ec2.SubnetType.PRIVATE_ISOLATED, cidr_mask=22),
                ec2.SubnetConfiguration(name="data", subnet_type=ec2.SubnetType.PRIVATE_ISOLATED, cidr_mask=24),
            ],
        )
        self.vpc.add_flow_log("FlowLog")
        self.compute_subnets = ec2.SubnetSelection(subnet_group_name="compute")
        self.data_subnets = ec2.SubnetSelection(subnet_group_name="data")
        self.functions_sg = ec2.SecurityGroup(self, "FunctionsSg", vpc=self.vpc, description="engram functions")
        endpoint_sg = ec2.SecurityGroup(self, "EndpointsSg", vpc=self.vpc, description="interface endpoints")
        endpoint_sg.add_ingress_rule(self.functions_sg, ec2.Port.tcp(443), "functions to AWS APIs")
        for name, service in ENDPOINT_SERVICES.items():
            self.vpc.add_interface_endpoint(name, service=service, subnets=self.compute_subnets,
                                            security_groups=[endpoint_sg])
        self.vpc.add_gateway_endpoint("S3", service=ec2.GatewayVpcEndpointAwsService.S3)
