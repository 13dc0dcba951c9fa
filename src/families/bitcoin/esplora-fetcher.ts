import type { HttpClient } from '../http-client.ts';
import { ReorgDuringFetch } from '../source.ts';
import { HEX64, type BlockFetcher } from './bitcoin-source.ts';

/**
 * The Esplora REST API (mempool.space, Blockstream, your own electrs): `/blocks/tip/height`,
 * `/block-height/:n` (the hash, text), `/block/:hash/header` (hex) and `/block/:hash/raw` (bytes):
 * two calls per block.
 */
export function createEsploraFetcher(http: HttpClient): BlockFetcher {
  return {
    async tipHeight() {
      const text = (await http.text('/blocks/tip/height'))!.trim();
      if (!/^\d+$/.test(text)) throw new Error(`malformed answer to /blocks/tip/height: ${text.slice(0, 80)}`);
      return BigInt(text);
    },
    async hashAt(n) {
      const text = await http.text(`/block-height/${n}`, { allowNotFound: true });
      if (text === null) return null;
      const hash = text.trim();
      if (!HEX64.test(hash)) throw new ReorgDuringFetch(`malformed answer to /block-height/${n}: ${hash.slice(0, 80)}`);
      return hash;
    },
    async header(hash) {
      const text = (await http.text(`/block/${hash}/header`))!.trim();
      if (!/^[0-9a-f]{160}$/.test(text)) throw new Error(`malformed answer to /block/${hash}/header`);
      return Buffer.from(text, 'hex');
    },
    rawBlock: (hash) => http.bytes(`/block/${hash}/raw`),
  };
}
