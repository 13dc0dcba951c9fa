import { getAddress, id as keccakId } from 'ethers';
import type { RpcLog } from '../jsonrpc/schemas.ts';
import type { SeenTransfer } from '../source.ts';

// The payment contract's one event, read alike by the indexer (evm-source.ts) and by a buyer's
// claim (receipt.ts), so both record the same transfer.

export const PAYMENT_RECEIVED_TOPIC = keccakId('PaymentReceived(bytes32,address,address,uint256)');
const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';

/** The checksummed address in the low 20 bytes of a 32-byte topic. */
export const topicAddress = (topic: string): string => getAddress(`0x${topic.slice(-40)}`);

/** Who paid whom in what, from a `PaymentReceived(bytes32 externalId, address payer, address token, uint256)` log of the payment contract (four topics). */
export function paymentEventParties(log: Pick<RpcLog, 'address' | 'topics'>): Pick<SeenTransfer, 'from' | 'to' | 'token' | 'kind' | 'externalId'> {
  const token = topicAddress(log.topics[3]!);
  return {
    from: topicAddress(log.topics[2]!),
    to: getAddress(log.address),
    token: token === ZERO_ADDRESS ? null : token,
    kind: 'contract',
    externalId: log.topics[1]!.toLowerCase(),
  };
}

