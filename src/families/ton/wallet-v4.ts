import { createHash } from 'node:crypto';
import { Address, beginCell, Cell, contractAddress, type StateInit } from '@ton/core';
import { UsageError } from '../../domain/errors.ts';
import { ed25519PublicKey, slip10Ed25519 } from '../ed25519-keys.ts';

// TON deposit wallets made from one secret (docs/sweeps/ton.md#keys): the BIP39 seed gives an
// ed25519 key at m/44'/607'/i' (SLIP-0010, hardened only), and each key's deposit is the standard
// wallet v4r2 contract with the default subwallet id: its address is the hash of that code and
// data, so it exists before the wallet is deployed, and the first outgoing message deploys it from
// the same state_init. Pure and synchronous, for the offline signer and for making the pool list.

/** wallet v4r2's code as @ton/ton 16 (WalletContractV4) deploys it; code hash feb5ff68…ea9b5b (the hash toncenter reports for v4r2). */
export const WALLET_V4R2_CODE = Cell.fromBase64(
  'te6ccgECFAEAAtQAART/APSkE/S88sgLAQIBIAIDAgFIBAUE+PKDCNcYINMf0x/THwL4I7vyZO1E0NMf0x/T//QE0VFDuvKhUVG68qIF+QFUEGT5EPKj+AAkpMjLH1JAyx9SMMv/UhD0AMntVPgPAdMHIcAAn2xRkyDXSpbTB9QC+wDoMOAhwAHjACHAAuMAAcADkTDjDQOkyMsfEssfy/8QERITAubQAdDTAyFxsJJfBOAi10nBIJJfBOAC0x8hghBwbHVnvSKCEGRzdHK9sJJfBeAD+kAwIPpEAcjKB8v/ydDtRNCBAUDXIfQEMFyBAQj0Cm+hMbOSXwfgBdM/yCWCEHBsdWe6kjgw4w0DghBkc3RyupJfBuMNBgcCASAICQB4AfoA9AQw+CdvIjBQCqEhvvLgUIIQcGx1Z4MesXCAGFAEywUmzxZY+gIZ9ADLaRfLH1Jgyz8gyYBA+wAGAIpQBIEBCPRZMO1E0IEBQNcgyAHPFvQAye1UAXKwjiOCEGRzdHKDHrFwgBhQBcsFUAPPFiP6AhPLassfyz/JgED7AJJfA+ICASAKCwBZvSQrb2omhAgKBrkPoCGEcNQICEekk30pkQzmkD6f+YN4EoAbeBAUiYcVnzGEAgFYDA0AEbjJftRNDXCx+AA9sp37UTQgQFA1yH0BDACyMoHy//J0AGBAQj0Cm+hMYAIBIA4PABmtznaiaEAga5Drhf/AABmvHfaiaEAQa5DrhY/AAG7SB/oA1NQi+QAFyMoHFcv/ydB3dIAYyMsFywIizxZQBfoCFMtrEszMyXP7AMhAFIEBCPRR8qcCAHCBAQjXGPoA0z/IVCBHgQEI9FHyp4IQbm90ZXB0gBjIywXLAlAGzxZQBPoCFMtqEssfyz/Jc/sAAgBsgQEI1xj6ANM/MFIkgQEI9Fnyp4IQZHN0cnB0gBjIywXLAlAFzxZQA/oCE8tqyx8Syz/Jc/sAAAr0AMntVA==',
);
/** The default subwallet id of a basechain wallet v3/v4 (698983191 + workchain): what every wallet app uses. */
export const SUBWALLET_ID = 698983191;
/** wallet v4r2 holds at most 4 outgoing messages per external message (its code stores them as refs of one cell). */
export const MAX_MESSAGES = 4;

export const tonPath = (index: number): string => `m/44'/607'/${index}'`;

/** The state_init of a fresh wallet v4r2 for this public key: seqno 0, the default subwallet, no plugins. */
export function walletStateInit(publicKey: Uint8Array): StateInit {
  const data = beginCell().storeUint(0, 32).storeUint(SUBWALLET_ID, 32).storeBuffer(Buffer.from(publicKey)).storeBit(0).endCell();
  return { code: WALLET_V4R2_CODE, data };
}

/** The address as the pool stores it: user-friendly, url-safe, non-bounceable (UQ…; 0Q… flagged test-only on testnet). */
export const poolForm = (address: Address, testnet: boolean): string => address.toString({ urlSafe: true, bounceable: false, testOnly: testnet });

export function tonKeyAt(seed: Uint8Array, index: number, testnet: boolean): { address: string; privateKey: Uint8Array; publicKey: Uint8Array } {
  const { key } = slip10Ed25519(seed, [44, 607, index]);
  const publicKey = ed25519PublicKey(key);
  return { address: poolForm(contractAddress(0, walletStateInit(publicKey)), testnet), privateKey: key, publicKey };
}

/**
 * The deposit addresses a seed gives at indexes start … start+count-1, in the pool's form, one per
 * line as `wallets seed --chain ton --file` reads them. Pure; meant for the offline machine.
 */
export function tonDepositAddresses(seed: Uint8Array, start: number, count: number, testnet: boolean): { index: number; path: string; address: string }[] {
  const out: { index: number; path: string; address: string }[] = [];
  for (let i = start; i < start + count; i++) out.push({ index: i, path: tonPath(i), address: tonKeyAt(seed, i, testnet).address });
  return out;
}

/** Parses an address in any form, or throws saying which one. */
export function parseTonAddress(value: string, what: string): Address {
  try {
    return Address.parse(value);
  } catch {
    throw new UsageError(`${what} ${value} is not a TON address`);
  }
}

/**
 * The index of a wallet among the first `limit` keys of a seed, or null. The derived addresses
 * are remembered per seed (by its hash, in this process only), so a plan of 200 list deposits
 * searches the range once, not 200 times.
 */
const searched = new Map<string, { next: number; byRaw: Map<string, number> }>();

export function findTonIndex(seed: Uint8Array, target: Address, limit: number): number | null {
  const id = createHash('sha256').update(seed).digest('hex');
  let memo = searched.get(id);
  if (!memo) searched.set(id, (memo = { next: 0, byRaw: new Map() }));
  const wanted = target.toRawString();
  const known = memo.byRaw.get(wanted);
  if (known !== undefined && known < limit) return known;
  for (; memo.next < limit; memo.next++) {
    const { key } = slip10Ed25519(seed, [44, 607, memo.next]);
    const raw = contractAddress(0, walletStateInit(ed25519PublicKey(key))).toRawString();
    memo.byRaw.set(raw, memo.next);
    if (raw === wanted) return memo.next++;
  }
  return null;
}
