"""The network: isolated subnets, AWS APIs through interface endpoints instead of a NAT gateway, one
zone for what is billed per zone in `small`, two in `prod`; egress only for the Anthropic API."""

from __future__ import annotations

from typing import Any

import pytest

from tests.infra.synth import Template, engram_functions, resources

pytestmark = pytest.mark.infra

ENDPOINTS = {"states", "secretsmanager", "bedrock-runtime", "xray"}


def _service(endpoint: dict[str, Any]) -> str:
    """`com.amazonaws.<region>.<service>` -> `<service>`."""
    return str(endpoint["ServiceName"]["Fn::Join"][1][-1]).removeprefix(".")


def _subnets_of_functions(template: Template) -> set[str]:
    return {ref["Ref"] for _, props in engram_functions(template).values() for ref in props["VpcConfig"]["SubnetIds"]}


def test_the_vpc_has_isolated_subnets_only_and_no_way_to_the_internet(template: Template) -> None:
    assert len(resources(template, "AWS::EC2::VPC")) == 1
    subnets = resources(template, "AWS::EC2::Subnet")
    assert len(subnets) == 4 and all(s["MapPublicIpOnLaunch"] is False for s in subnets.values())
    for kind in ("AWS::EC2::NatGateway", "AWS::EC2::InternetGateway", "AWS::EC2::EgressOnlyInternetGateway",
                 "AWS::EC2::Route"):
        assert not resources(template, kind), kind


def test_the_functions_reach_exactly_the_aws_apis_they_call_through_private_interface_endpoints(
        template: Template) -> None:
    endpoints = resources(template, "AWS::EC2::VPCEndpoint").values()
    assert all(e["VpcEndpointType"] == "Interface" and e["PrivateDnsEnabled"] is True for e in endpoints)
    assert {_service(e) for e in endpoints} == ENDPOINTS


def test_small_puts_the_functions_and_every_endpoint_in_one_zone(small: Template) -> None:
    [subnet] = _subnets_of_functions(small)
    for endpoint in resources(small, "AWS::EC2::VPCEndpoint").values():
        assert endpoint["SubnetIds"] == [{"Ref": subnet}]


def test_prod_spreads_the_functions_and_every_endpoint_over_two_zones(prod: Template) -> None:
    subnets = _subnets_of_functions(prod)
    assert len(subnets) == 2
    for endpoint in resources(prod, "AWS::EC2::VPCEndpoint").values():
        assert {ref["Ref"] for ref in endpoint["SubnetIds"]} == subnets


def test_the_anthropic_api_adds_one_nat_gateway_and_routes_only_the_functions_subnets_through_it(
        overridden: Template) -> None:
    [nat] = resources(overridden, "AWS::EC2::NatGateway")
    egress = {route["RouteTableId"]["Ref"] for route in resources(overridden, "AWS::EC2::Route").values()
              if route.get("NatGatewayId") == {"Ref": nat}}
    associated = {a["SubnetId"]["Ref"]: a["RouteTableId"]["Ref"]
                  for a in resources(overridden, "AWS::EC2::SubnetRouteTableAssociation").values()}
    assert {associated[subnet] for subnet in _subnets_of_functions(overridden)} <= egress
    data = {logical for logical in resources(overridden, "AWS::EC2::Subnet") if "data" in logical.lower()}
    assert data and not {associated[subnet] for subnet in data} & egress


def test_vpc_traffic_is_recorded_in_flow_logs(template: Template) -> None:
    [flow_log] = resources(template, "AWS::EC2::FlowLog").values()
    assert flow_log["ResourceType"] == "VPC" and flow_log["TrafficType"] == "ALL"
