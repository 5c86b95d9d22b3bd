import * as aws from "@pulumi/aws";
import * as command from "@pulumi/command";
import * as docker from "@pulumi/docker";
import * as pulumi from "@pulumi/pulumi";
import type { Tier } from "../config/index.js";
import { ADMIN_USER, PUBLIC_PORTS, awsSizing, cloudInitUserData, monthlyCost, type AwsNeeds } from "../hosts/aws.js";
import type { Host } from "./host.js";
import type { Ingress } from "../plan/index.js";

export interface AwsHostArgs {
  readonly region: string;
  readonly tier: Tier;
  /** Overrides the tier's instance type; validation made sure it meets the tier. */
  readonly instanceType?: string;
  /** OpenSSH public key for the `admin` user. */
  readonly sshPublicKey: string;
  /** CIDRs SSH (and so the Docker provider) may come from. */
  readonly allowSshFrom: readonly string[];
  /** Keep the EBS data volume when the stack is destroyed. */
  readonly retainData: boolean;
  /** Data volume size, IOPS and throughput, and memory, from the resource table and host.diskGB/diskIops. */
  readonly needs?: AwsNeeds;
  /** The instance's address in the VPC (`hosts.<name>.privateAddress`): where the stack's host reaches its nodes. */
  readonly privateAddress?: string;
  /** A further host's ports beyond the gateway's: its nodes' p2p from anywhere, their RPC and checks from the stack's host (plan/ingress.ts). */
  readonly ingress?: readonly Ingress[];
}

/**
 * An EC2 instance (Debian 12, default VPC) sized to the tier, with an encrypted gp3 data
 * volume mounted at Docker's data root, an Elastic IP and a security group that opens only the
 * gateway and p2p ports, and SSH from the listed CIDRs.
 */
export class AwsHost extends pulumi.ComponentResource implements Host {
  readonly publicAddress: pulumi.Output<string>;
  readonly dockerProvider: docker.Provider;
  readonly monthlyCostUsd: pulumi.Output<number>;
  readonly instanceType: string;

  constructor(name: string, args: AwsHostArgs, opts?: pulumi.ComponentResourceOptions) {
    super("rpcstack:index:AwsHost", name, {}, opts);
    const sizing = awsSizing(args.tier, args.instanceType, args.needs);
    const awsProvider = new aws.Provider(`${name}-aws`, { region: args.region as aws.Region }, { parent: this });
    const o = { parent: this, provider: awsProvider };
    const zone = `${args.region}a`;

    const ami = aws.ec2.getAmiOutput(
      {
        owners: ["136693071363"], // Debian's official AWS account
        mostRecent: true,
        filters: [
          { name: "name", values: ["debian-12-amd64-*"] },
          { name: "architecture", values: ["x86_64"] },
          { name: "virtualization-type", values: ["hvm"] },
        ],
      },
      { parent: this, provider: awsProvider },
    );

    const open = { cidrBlocks: ["0.0.0.0/0"], ipv6CidrBlocks: ["::/0"] };
    const securityGroup = new aws.ec2.SecurityGroup(
      `${name}-sg`,
      {
        description: "rpcstack: gateway (443, 80) and p2p ports; SSH only from the operator",
        ingress: [
          ...PUBLIC_PORTS.map((p) => ({ protocol: p.protocol, fromPort: p.port, toPort: p.port, description: p.why, ...open })),
          // What the gateway's ports above do not open already (AWS refuses a rule twice).
          ...(args.ingress ?? []).filter((p) => p.from !== undefined || !PUBLIC_PORTS.some((q) => q.port === p.port && q.protocol === p.protocol)).map((p) => ({
            protocol: p.protocol,
            fromPort: p.port,
            toPort: p.port,
            description: `rpcstack: ${p.why}`,
            ...(p.from === undefined ? open : p.from.includes(":") ? { ipv6CidrBlocks: [`${p.from}/128`] } : { cidrBlocks: [`${p.from}/32`] }),
          })),
          ...args.allowSshFrom.map((cidr) => ({
            protocol: "tcp",
            fromPort: 22,
            toPort: 22,
            description: "SSH (and the Docker provider) from the operator",
            ...(cidr.includes(":") ? { ipv6CidrBlocks: [cidr] } : { cidrBlocks: [cidr] }),
          })),
        ],
        egress: [{ protocol: "-1", fromPort: 0, toPort: 0, ...open }],
      },
      o,
    );

    const dataVolume = new aws.ebs.Volume(
      `${name}-data`,
      {
        availabilityZone: zone,
        type: "gp3",
        size: sizing.dataVolume.sizeGiB,
        iops: sizing.dataVolume.iops,
        throughput: sizing.dataVolume.throughputMiBps,
        encrypted: true,
        tags: { Name: `${name}-data`, "rpcstack:purpose": "chain data (Docker data root)" },
      },
      { ...o, retainOnDelete: args.retainData },
    );

    const keyPair = new aws.ec2.KeyPair(`${name}-key`, { publicKey: args.sshPublicKey }, o);
    const instance = new aws.ec2.Instance(
      `${name}-instance`,
      {
        ami: ami.id,
        instanceType: sizing.instanceType,
        availabilityZone: zone,
        keyName: keyPair.keyName,
        vpcSecurityGroupIds: [securityGroup.id],
        ...(args.privateAddress ? { privateIp: args.privateAddress } : {}),
        metadataOptions: { httpTokens: "required", httpEndpoint: "enabled", httpPutResponseHopLimit: 1 },
        rootBlockDevice: { volumeType: "gp3", volumeSize: sizing.rootVolumeGiB, encrypted: true, deleteOnTermination: true },
        userData: dataVolume.id.apply(cloudInitUserData),
        userDataReplaceOnChange: false,
        tags: { Name: name },
      },
      o,
    );
    const attachment = new aws.ec2.VolumeAttachment(
      `${name}-data-attachment`,
      { deviceName: "/dev/sdf", volumeId: dataVolume.id, instanceId: instance.id, stopInstanceBeforeDetaching: true },
      o,
    );
    const eip = new aws.ec2.Eip(`${name}-eip`, { domain: "vpc", instance: instance.id, tags: { Name: name } }, o);

    // The Docker provider speaks SSH with the operator's own ssh client and agent, so this wait
    // does too: it returns once cloud-init has mounted the volume and installed Docker.
    const ready = new command.local.Command(
      `${name}-wait-cloud-init`,
      {
        create: [
          "for i in $(seq 1 60); do",
          '  ssh -o StrictHostKeyChecking=accept-new -o ConnectTimeout=10 -o BatchMode=yes "$RPCSTACK_HOST" "cloud-init status --wait >/dev/null; docker version --format {{.Server.Version}}" && exit 0',
          "  sleep 15",
          "done",
          'echo "rpcstack: $RPCSTACK_HOST did not finish cloud-init within 15 minutes" >&2; exit 1',
        ].join("\n"),
        environment: { RPCSTACK_HOST: pulumi.interpolate`${ADMIN_USER}@${eip.publicIp}` },
        interpreter: ["/bin/sh", "-c"],
      },
      { parent: this, dependsOn: [attachment] },
    );

    this.instanceType = sizing.instanceType;
    this.publicAddress = eip.publicIp;
    this.dockerProvider = new docker.Provider(
      `${name}-docker`,
      { host: pulumi.interpolate`ssh://${ADMIN_USER}@${eip.publicIp}`, sshOpts: ["-o", "StrictHostKeyChecking=accept-new"] },
      { parent: this, dependsOn: [ready] },
    );
    this.monthlyCostUsd = pulumi.output(monthlyCost(sizing).totalUsdPerMonth);
    this.registerOutputs({ publicAddress: this.publicAddress, monthlyCostUsd: this.monthlyCostUsd, instanceType: this.instanceType });
  }
}
