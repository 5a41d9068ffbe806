"""cdk-nag (AwsSolutions) findings we accept, each with the reason a reviewer would need.

cdk-nag 3 acknowledges each finding by its exact id; ids that name a resource use its logical id.
"""

from __future__ import annotations

import aws_cdk as cdk
from constructs import IConstruct

from infra.constructs.functions import PROFILED_MODELS

_STATES_EXECUTIONS = ('arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:{"Fn::Select":[6,'
                      '{"Fn::Split":[":",{"Ref":"WorkflowsQuery5854D436"}]}]}:*')
ACKNOWLEDGED: dict[str, str] = {
    "AwsSolutions-COG2": "agents authenticate with machine credentials; MFA is offered (optional) for people",
    "AwsSolutions-COG8": "the Plus feature plan (threat protection) is a per-user cost left to each deployment",
    "AwsSolutions-EC23": "the endpoint security group admits only the functions' group on 443; cdk-nag cannot "
                         "read the intrinsic in the rule",
    "AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]":
        "AWS's minimal policy for writing the function's own logs",
    "AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole]":
        "AWS's minimal policy for a function's network interfaces in the VPC",
    "AwsSolutions-IAM5[Resource::*]": "X-Ray trace writes, log delivery and log resource policies accept no "
                                      "narrower resource; Cognito's SMS role publishes to phone numbers, which "
                                      "have no ARN",
    "AwsSolutions-IAM5[Resource::<FunctionsConsolidateA76BEAE6.Arn>:*]": "Step Functions invokes any version "
                                                                         "of its own task function",
    "AwsSolutions-IAM5[Resource::<FunctionsExtract10104BDA.Arn>:*]": "Step Functions invokes any version of its "
                                                                     "own task function",
    "AwsSolutions-IAM5[Resource::<FunctionsQueryStep60207A93.Arn>:*]": "Step Functions invokes any version of its "
                                                                       "own task function",
    "AwsSolutions-IAM5[Resource::<FunctionsResolveD88C1513.Arn>:*]": "Step Functions invokes any version of its "
                                                                     "own task function",
    "AwsSolutions-IAM5[Resource::<SearchDomain62FD613E.Arn>/*]": "the functions read and write the one engram "
                                                                 "index family inside this domain only",
    **{f"AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:bedrock:*::foundation-model/{model}]":
       "a cross-region inference profile serves the call from this model in any of the profile's regions; the "
       "grant holds only through engram's own profile (condition bedrock:InferenceProfileArn)"
       for model in PROFILED_MODELS},
    f"AwsSolutions-IAM5[Resource::{_STATES_EXECUTIONS}]": "the api reads the executions of engram-query only",
    "AwsSolutions-L1": "the functions and their layer are built for Python 3.12 on purpose (wheels are pinned "
                       "to that ABI)",
    "AwsSolutions-OS3": "the domain lives in isolated subnets and admits only the functions' security group",
    "AwsSolutions-OS4": "one data node suits the default size; dedicated masters belong to the prod profile",
    "AwsSolutions-OS5": "access is by IAM identity policies with SigV4, from inside the VPC only",
    "AwsSolutions-OS7": "zone awareness belongs to the prod profile; the keyword index is rebuildable from "
                        "PostgreSQL",
}


def acknowledge(scope: IConstruct) -> None:
    for rule, reason in ACKNOWLEDGED.items():
        cdk.Validations.of(scope).acknowledge(cdk.Acknowledgment(id=f"AwsSolutions::{rule}", reason=reason))
