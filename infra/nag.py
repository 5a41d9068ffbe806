"""cdk-nag (AwsSolutions) findings we accept, each with the reason a reviewer would need.

cdk-nag 3 acknowledges each finding by its exact id; ids that name a resource use its logical id.
The two profiles differ (prod has OpenSearch and RDS Proxy), so the acknowledgements are computed per
deployment; tests/infra checks that each profile's findings are exactly the acknowledged ones (none
unacknowledged, none stale).
"""

from __future__ import annotations

import aws_cdk as cdk
from constructs import IConstruct

from infra.config import Deployment

_STATES_EXECUTIONS = ('arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:{"Fn::Select":[6,'
                      '{"Fn::Split":[":",{"Ref":"WorkflowsQuery5854D436"}]}]}:*')
# The consolidation's distributed Map starts, reads and stops its own child executions.
_CONSOLIDATION_EXECUTIONS = ('arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:{"Fn::Select":'
                             '[6,{"Fn::Split":[":",{"Ref":"WorkflowsConsolidation396539FA"}]}]}')
_TASK_FUNCTIONS = ("FunctionsConsolidateA76BEAE6", "FunctionsExtract10104BDA", "FunctionsQueryStep60207A93",
                   "FunctionsResolveD88C1513")
_PROVIDER_TARGET = "SchemaMigrate4355B4FC"

COGNITO: dict[str, str] = {  # only when no identity provider is given and engram creates its user pool
    "AwsSolutions-COG2": "agents authenticate with machine credentials; MFA is offered (optional) for people",
    "AwsSolutions-COG8": "the Plus feature plan (threat protection) is a per-user cost left to each deployment",
}
COMMON: dict[str, str] = {
    "AwsSolutions-EC23": "the endpoint security group admits only the functions' group on 443; cdk-nag cannot "
                         "read the intrinsic in the rule",
    "AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]":
        "AWS's minimal policy for writing the function's own logs",
    "AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole]":
        "AWS's minimal policy for a function's network interfaces in the VPC",
    "AwsSolutions-IAM5[Resource::*]": "X-Ray trace writes, log delivery and log resource policies accept no "
                                      "narrower resource; Cognito's SMS role publishes to phone numbers, which "
                                      "have no ARN",
    **{f"AwsSolutions-IAM5[Resource::<{function}.Arn>:*]": "Step Functions invokes any version of its own task "
                                                          "function" for function in _TASK_FUNCTIONS},
    f"AwsSolutions-IAM5[Resource::<{_PROVIDER_TARGET}.Arn>:*]": "the CDK Provider framework invokes any version "
                                                               "of the schema migrations function",
    f"AwsSolutions-IAM5[Resource::{_STATES_EXECUTIONS}]": "the api reads the executions of engram-query only",
    **{f"AwsSolutions-IAM5[Resource::{_CONSOLIDATION_EXECUTIONS}{suffix}]":
       "engram-consolidation's distributed Map manages the child executions of its own map runs only"
       for suffix in (":*", "/*:*")},
    "AwsSolutions-L1": "the functions and their layer are built for Python 3.12 on purpose (wheels are pinned "
                       "to that ABI); the Provider framework's Node.js runtime is CDK's choice",
}
PROD: dict[str, str] = {
    "AwsSolutions-IAM5[Resource::<SearchDomain62FD613E.Arn>/*]": "the functions read and write engram's indexes "
                                                                 "inside this one domain only (index-level "
                                                                 "permissions are fine-grained access roles)",
    "AwsSolutions-OS3": "the domain lives in isolated subnets and admits only the functions' security group",
    "AwsSolutions-OS5": "access is by IAM identity policies with SigV4 and fine-grained access control, from "
                        "inside the VPC only",
}


def acknowledgements(deployment: Deployment) -> dict[str, str]:
    """Every finding accepted for this deployment, with its reason."""
    found = dict(COMMON)
    if not deployment.jwt_issuer:
        found.update(COGNITO)
    if deployment.llm == "bedrock":
        found.update({
            f"AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:bedrock:*::foundation-model/{model}]":
            "a cross-region inference profile serves the call from this model in any of the profile's regions; "
            "the grant holds only through engram's own profile (condition bedrock:InferenceProfileArn)"
            for model in deployment.profiled_models})
    if deployment.prod:
        found.update(PROD)
    return found


def acknowledge(scope: IConstruct, deployment: Deployment) -> None:
    for rule, reason in acknowledgements(deployment).items():
        cdk.Validations.of(scope).acknowledge(cdk.Acknowledgment(id=f"AwsSolutions::{rule}", reason=reason))
