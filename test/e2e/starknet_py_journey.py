"""starknet-py through the gateway: the journey of test/e2e/starknetJourney.ts, printed as one JSON line.

usage: python starknet_py_journey.py NODE_URL FUNDER_ADDRESS FUNDER_PRIVATE_KEY

NODE_URL is a gateway path (its TLS certificate trusted through SSL_CERT_FILE); the funder is one
of Devnet's predeployed accounts. Chain id, block number, a new account funded and deployed, a
transfer from it that lands, and the block that holds the transfer.
"""

import asyncio
import json
import secrets
import sys

from starknet_py.hash.address import compute_address
from starknet_py.hash.selector import get_selector_from_name
from starknet_py.net.account.account import Account
from starknet_py.net.client_models import Call
from starknet_py.net.full_node_client import FullNodeClient
from starknet_py.net.signer.key_pair import KeyPair

# Devnet's STRK fee token (the same address as on Starknet).
STRK_TOKEN = 0x04718F5A0FC34CC1AF16A1CDEE98FFB20C31F5CD61D6AB07201858F4287C938D
AMOUNT = 10**18


def transfer(recipient: int, amount: int) -> Call:
    return Call(to_addr=STRK_TOKEN, selector=get_selector_from_name("transfer"), calldata=[recipient, amount, 0])


async def journey(url: str, funder_address: str, funder_key: str) -> dict:
    client = FullNodeClient(node_url=url)
    chain_id = await client.get_chain_id()
    funder = Account(address=funder_address, client=client, key_pair=KeyPair.from_private_key(int(funder_key, 16)), chain=int(chain_id, 16))
    class_hash = await client.get_class_hash_at(funder_address)

    key_pair = KeyPair.from_private_key(secrets.randbelow(2**250) + 1)
    address = compute_address(salt=key_pair.public_key, class_hash=class_hash, constructor_calldata=[key_pair.public_key], deployer_address=0)
    funded = await funder.execute_v3(calls=transfer(address, 10 * AMOUNT), auto_estimate=True)
    await client.wait_for_tx(funded.transaction_hash, check_interval=0.5)

    deployment = await Account.deploy_account_v3(
        address=address, class_hash=class_hash, salt=key_pair.public_key, key_pair=key_pair, client=client,
        constructor_calldata=[key_pair.public_key], auto_estimate=True,
    )
    deployed = await client.wait_for_tx(deployment.hash, check_interval=0.5)
    fresh = deployment.account

    async def balance() -> int:
        # The pre-confirmed state holds every transaction so far: between the two reads only the transfer touches it.
        call = Call(to_addr=STRK_TOKEN, selector=get_selector_from_name("balanceOf"), calldata=[int(funder_address, 16)])
        low, high = await client.call_contract(call, block_number="pre_confirmed")
        return low + (high << 128)

    before = await balance()
    sent = await fresh.execute_v3(calls=transfer(int(funder_address, 16), AMOUNT), auto_estimate=True)
    receipt = await client.wait_for_tx(sent.transaction_hash, check_interval=0.5)
    block = await client.get_block_with_txs(block_number=receipt.block_number)
    received = await balance() - before
    return {
        "specVersion": await client.spec_version(),
        "chainId": chain_id,
        "blockNumber": await client.get_block_number(),
        "deployed": {"address": hex(address), "classHash": hex(await client.get_class_hash_at(address)), "status": deployed.execution_status.value},
        "transfer": {
            "hash": hex(sent.transaction_hash),
            "status": receipt.execution_status.value,
            "blockNumber": receipt.block_number,
            "inBlock": any(tx.hash == sent.transaction_hash for tx in block.transactions),
            "received": str(received),
        },
    }


def main() -> int:
    if len(sys.argv) != 4 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr if len(sys.argv) != 2 else sys.stdout)
        return 0 if len(sys.argv) == 2 and sys.argv[1] in ("-h", "--help") else 2
    print(json.dumps(asyncio.run(journey(*sys.argv[1:]))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
