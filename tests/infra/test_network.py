"""The network: isolated subnets only, AWS APIs through VPC endpoints instead of a NAT gateway."""

from __future__ import annotations

from typing import Any

import pytest

from tests.infra.synth import Template, resources

pytestmark = pytest.mark.infra


def _service(endpoint: dict[str, Any]) -> str:
    """`com.amazonaws.<region>.<service>` -> `<service>`."""
    return str(endpoint["ServiceName"]["Fn::Join"][1][-1]).removeprefix(".")


def test_the_vpc_has_isolated_subnets_only_and_no_way_to_the_internet(template: Template) -> None:
    assert len(resources(template, "AWS::EC2::VPC")) == 1
    subnets = resources(template, "AWS::EC2::Subnet")
    assert len(subnets) >= 2 and all(s["MapPublicIpOnLaunch"] is False for s in subnets.values())
    for kind in ("AWS::EC2::NatGateway", "AWS::EC2::InternetGateway", "AWS::EC2::EgressOnlyInternetGateway",
                 "AWS::EC2::Route"):
        assert not resources(template, kind), kind


def test_the_functions_reach_step_functions_secrets_manager_and_bedrock_through_interface_endpoints(
        template: Template) -> None:
    interface = {_service(e) for e in resources(template, "AWS::EC2::VPCEndpoint").values()
                 if e["VpcEndpointType"] == "Interface" and e["PrivateDnsEnabled"] is True}
    assert {"states", "secretsmanager", "bedrock-runtime"} <= interface


def test_s3_is_reached_through_a_gateway_endpoint_on_every_route_table(template: Template) -> None:
    [s3] = [e for e in resources(template, "AWS::EC2::VPCEndpoint").values() if _service(e) == "s3"]
    assert s3["VpcEndpointType"] == "Gateway"
    assert {t["Ref"] for t in s3["RouteTableIds"]} == set(resources(template, "AWS::EC2::RouteTable"))


def test_vpc_traffic_is_recorded_in_flow_logs(template: Template) -> None:
    [flow_log] = resources(template, "AWS::EC2::FlowLog").values()
    assert flow_log["ResourceType"] == "VPC" and flow_log["TrafficType"] == "ALL"
