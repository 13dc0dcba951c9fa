// java-tron HTTP API transactions (JsonFormat, visible=false: 41-prefixed hex addresses, hex
// bytes), each a real transaction as a java-tron node answered for it, with where it was recorded.
// For every one, txID is sha256(raw_data_hex) and raw_data_hex is the protobuf encoding of raw_data
// (protocol.Transaction.raw), as java-tron computes them: tron-indexer-reader.test.ts checks both,
// so an edited fixture cannot drift from the real wire form. The local java-tron server
// (java-tron-node.ts) serves them inside blocks, with a test's deposit address written into
// `to_address` / `receiver_address`.

/**
 * TRX TransferContract, SUCCESS. Mainnet block of 2022-05-25 (java-tron GreatVoyage 4.4 era), as
 * /wallet/getblockbynum returns it: the GetBlockByNum example of TRON's developer guide "TRX and
 * TRC10 transactions" (developers.tron.network), copied whole.
 */
export const TRX_TRANSFER = {
  ret: [{ contractRet: 'SUCCESS' }],
  signature: ['aa5f69104f70e961cacfcf6cbc7710fc5820135f1b39effd394d6690b243df30b34f389741df923f665cc20521f217aeb06914abe6776510fe0277555e10203401'],
  txID: '9aedad431ed596035eb44656a6c23bd43849c5e2a8161483c5c7426d7f246363',
  raw_data: {
    contract: [
      {
        parameter: {
          value: { amount: 1318520000, owner_address: '41fcf62171f6837cdb078460753aec8b8353f51be9', to_address: '41ec5f9648b3ba5d70c8dfc8beca5af9ef24e16746' },
          type_url: 'type.googleapis.com/protocol.TransferContract',
        },
        type: 'TransferContract',
      },
    ],
    ref_block_bytes: '0bc9',
    ref_block_hash: '78471e96bbb26ab2',
    expiration: 1653443076000,
    timestamp: 1653443018811,
  },
  raw_data_hex:
    '0a020bc9220878471e96bbb26ab240a0bf8cc78f305a69080112650a2d747970652e676f6f676c65617069732e636f6d2f70726f746f636f6c2e5472616e73666572436f6e747261637412340a1541fcf62171f6837cdb078460753aec8b8353f51be9121541ec5f9648b3ba5d70c8dfc8beca5af9ef24e1674618c089dcf40470bb8089c78f30',
};

/**
 * TRC-10 TransferAssetContract, SUCCESS: mainnet transaction 78758c53… of 2022-10-18 (java-tron
 * GreatVoyage 4.5 era) as /wallet/gettransactionbyid answered it (published in a public gist,
 * "tron tx response"). 50 units of token 1004295 (asset_name is the id as UTF-8 hex since
 * ALLOW_SAME_TOKEN_NAME) with a memo in raw_data.data (an airdrop-spam text, as is common on TRC-10
 * transfers). The published answer was cut before `timestamp` and `raw_data_hex`: both were
 * recovered exactly, as the only values whose protobuf encoding hashes to the recorded txID.
 */
export const TRC10_TRANSFER = {
  ret: [{ contractRet: 'SUCCESS' }],
  signature: ['e788847a9b215d40b3abff32fd33724f2089e948273c6597f0431446dc0863437c18163cf8b0a3ab0827eb57a0bbae9fce7daa0ad9dd3c8f0406d55f132b851000'],
  txID: '78758c5303a49b7b9d010853b8774c55a554b57a26060190e3e338cb70043081',
  raw_data: {
    data: '53e2808b46e2808b43e2808b48e2808be7ae9ce2808be9aab0e2808befbc8ce681ade2808be5969ce2808be4bda0e2808be4b8ade2808be7adbeefbc8ce68993e2808be5bc802077e2808b77e2808b772e6f6be2808b7472e2808b6f6e2e66e2808b756e20e58fafe2808be58591e2808be68da2e2808b33e2808b35e2808b30e2808b30e2808b54e2808b52e2808b58',
    contract: [
      {
        parameter: {
          value: { amount: 50, asset_name: '31303034323935', owner_address: '41012f7ebd705ad300e53c0283696d21051efc3c02', to_address: '41e967ce2c5bd9af0598a98b5fe0a251ad7b7e38d8' },
          type_url: 'type.googleapis.com/protocol.TransferAssetContract',
        },
        type: 'TransferAssetContract',
      },
    ],
    ref_block_bytes: '4576',
    ref_block_hash: '1a75bfca3a2789dd',
    expiration: 1666097163000,
    timestamp: 1666097103908,
  },
  raw_data_hex:
    '0a02457622081a75bfca3a2789dd40f8d584d9be3052900153e2808b46e2808b43e2808b48e2808be7ae9ce2808be9aab0e2808befbc8ce681ade2808be5969ce2808be4bda0e2808be4b8ade2808be7adbeefbc8ce68993e2808be5bc802077e2808b77e2808b772e6f6be2808b7472e2808b6f6e2e66e2808b756e20e58fafe2808be58591e2808be68da2e2808b33e2808b35e2808b30e2808b30e2808b54e2808b52e2808b585a730802126f0a32747970652e676f6f676c65617069732e636f6d2f70726f746f636f6c2e5472616e736665724173736574436f6e747261637412390a0731303034323935121541012f7ebd705ad300e53c0283696d21051efc3c021a1541e967ce2c5bd9af0598a98b5fe0a251ad7b7e38d8203270a48881d9be30',
};

/**
 * DelegateResourceContract (Stake 2.0, java-tron GreatVoyage 4.7) delegating bandwidth to a
 * receiver, locked: GetTransactionById on a java-tron test network, as recorded in
 * tronprotocol/wallet-cli's README (DelegateResource example, txID 363ac0b8…). `resource` is absent
 * because BANDWIDTH is the enum's zero value, which JsonFormat leaves out.
 */
export const DELEGATE_RESOURCE = {
  ret: [{ contractRet: 'SUCCESS' }],
  signature: ['1f57fd78456136faadc5091b47f5fd27a8e1181621e49129df6a4062499429fb48ee72e5f9a9ff5bfb7f2575f01f4076f7d4b89ca382d36af46a6fa4bc749f4301'],
  txID: '363ac0b82b6ad3e0d3cad90f7d72b3eceafe36585432a3e013389db36152b6ed',
  raw_data: {
    contract: [
      {
        parameter: {
          value: { balance: 10000000, receiver_address: '419a9afe56e155ef0ff3f680d00ecf19deff60bdca', lock: true, owner_address: '4159e3741a68ec3e1ebba80ad809d5ccd31674236e' },
          type_url: 'type.googleapis.com/protocol.DelegateResourceContract',
        },
        type: 'DelegateResourceContract',
      },
    ],
    ref_block_bytes: '0000',
    ref_block_hash: '19b59068c6058ff4',
    expiration: 1671120059226,
    timestamp: 1671098459216,
  },
  raw_data_hex:
    '0a020000220819b59068c6058ff440daf691b4d1305a720839126e0a35747970652e676f6f676c65617069732e636f6d2f70726f746f636f6c2e44656c65676174655265736f75726365436f6e747261637412350a154159e3741a68ec3e1ebba80ad809d5ccd31674236e1880ade2042215419a9afe56e155ef0ff3f680d00ecf19deff60bdca280170d0c8eba9d130',
};

/**
 * FreezeBalanceContract (Stake 1.0) for ENERGY, 3 days: the signed transaction of TRON's developer
 * documentation ("Signing a transaction", tronWeb.trx.sign output, mainnet, 2018-10-23, java-tron
 * Odyssey 3.1 era), txID ddcbaf06…. Mined, java-tron adds `ret` SUCCESS (added here). The recorded
 * freeze has no receiver: the test writes a deposit address into `receiver_address` (field 15), as
 * a freeze "for another account" carries.
 */
export const FREEZE_FOR_RECEIVER = {
  ret: [{ contractRet: 'SUCCESS' }],
  signature: ['8e6582cead9ef92d7731e356b0131dca2dfe18d701bdaecb5591781af5493391127d10b4864cf45a0f56b10ed97af102864cff8205e14c8bf29b0e50d85f681801'],
  txID: 'ddcbaf061eaa2454975ae8faefbeb0b410329ef9e5bb43b64d4065a7d66720c7',
  raw_data: {
    contract: [
      {
        parameter: {
          value: { resource: 'ENERGY', frozen_duration: 3, frozen_balance: 1000000, owner_address: '41928c9af0651632157ef27a2cf17ca72c575a4d21' },
          type_url: 'type.googleapis.com/protocol.FreezeBalanceContract',
        },
        type: 'FreezeBalanceContract',
      },
    ],
    ref_block_bytes: 'ee08',
    ref_block_hash: '7b2480cc92edd8a2',
    expiration: 1540253364000,
    timestamp: 1540253304828,
  },
  raw_data_hex:
    '0a02ee0822087b2480cc92edd8a240a0de84f2e92c5a59080b12550a32747970652e676f6f676c65617069732e636f6d2f70726f746f636f6c2e467265657a6542616c616e6365436f6e7472616374121f0a1541928c9af0651632157ef27a2cf17ca72c575a4d2110c0843d1803500170fc8f81f2e92c',
};

/**
 * How java-tron renders a TRC-20 call that ran out of energy: TriggerSmartContract with
 * ret[0].contractRet "OUT_OF_ENERGY" (protocol.Transaction.Result.contractResult; see the
 * gettransactionbyid documentation). The local server writes this result over the EVM
 * transaction it mirrors, so the reader sees a Transfer log of a transaction that failed.
 */
export const OUT_OF_ENERGY = 'OUT_OF_ENERGY';

/**
 * The mainnet genesis block as /wallet/getblockbynum {"num":0} answers it (java-tron 4.8.1,
 * TronGrid): no `number` and no `timestamp` (protobuf JSON omits zeros), the id ends in the chain
 * id 2b6653dc. Only the id is recorded; the header fields are placeholders of the right form and
 * the three allocation transactions are left out (the reader reads only the id).
 */
export const MAINNET_GENESIS = {
  blockID: '00000000000000001ebf88508a03865c71d452e25f4d51194196a1d22b6653dc',
  block_header: {
    raw_data: {
      txTrieRoot: '32f3a77d0d2ba0a8d88d2c8e0eae1e3d8c0f8d1b4e5a2e6e7c5d4b3a29180706',
      witness_address: '41206e65772073797374656d206d75737420616c6c6f77206578697374696e672073797374656d7320746f206265206c696e6b656420746f67657468657220776974686f757420726571756972696e6720616e792063656e7472616c20636f6e74726f6c206f7220636f6f7264696e6174696f6e',
      parentHash: 'e58f33f9baf9305dc6f82b9f1934ea8f0ade2defb951258d50167028c780351f',
    },
  },
};
