// Every word of the hosted payment page, in English. A translation is a copy of this object with
// the same keys. `{name}` placeholders are filled in by the server (render.ts) or the browser
// (assets/page.js); the text itself is always inserted as text, never as HTML.

export const strings = {
  lang: 'en',
  pageTitle: 'Pay {merchant}',
  brand: 'Secure crypto checkout',
  poweredBy: 'Powered by chaingate',
  invoiceRef: 'Invoice {reference}',
  amountDue: 'Amount due',
  paidTo: 'Payment to',
  noScript: 'This payment page needs JavaScript to show your deposit address. Please enable it and reload.',
  loading: 'Loading your payment…',
  cancel: 'Cancel and return to {merchant}',
  demoBanner: 'Demo — test phrase, never pay. These deposit addresses come from a public test phrase: anyone can take what is sent to them.',
  testnetBanner: 'Test payments only — this checkout runs on test networks. Never send real funds.',
  testNetwork: 'Test network',

  // Choosing a network and coin
  chooseTitle: 'How would you like to pay?',
  chooseNetwork: 'Network',
  chooseCoin: 'Coin',
  continue: 'Show payment address',
  payWithWallet: 'Pay with browser wallet',
  invoiceExpiresIn: 'This invoice expires in {time}',
  nothingAccepted: 'No coin can be used for this payment right now. Please try again later or contact the merchant.',
  starting: 'Preparing your payment address…',

  // Paying to an address
  payTitle: 'Send your payment',
  sendExactly: 'Send exactly',
  toAddress: 'To this address',
  copy: 'Copy',
  copyAmount: 'Copy amount',
  copyAddress: 'Copy address',
  copied: 'Copied',
  copyFailed: 'Copy failed: select the text and copy it by hand',
  qrAlt: 'QR code with the payment address and amount',
  openInWallet: 'Open in wallet app',
  networkIs: 'Network: {network}',
  networkWarning: 'Send only {coin} on {network}. Coins sent on any other network, or a different coin, will be lost.',
  exactWarning: 'Send the exact amount in one transaction. The address is for this payment only.',
  timeLeft: 'Time left to pay: {time}',
  waiting: 'Waiting for your payment…',

  // Paying with a browser wallet (EIP-1193)
  walletTitle: 'Pay with your browser wallet',
  walletIntro: 'Your wallet will ask you to approve {steps}.',
  walletStepsNative: 'one transaction',
  walletStepsToken: 'two transactions: first allow the payment contract to take {amount} {coin}, then the payment itself',
  walletConnect: 'Connect wallet and pay',
  walletConnecting: 'Waiting for your wallet…',
  walletSwitching: 'Switching your wallet to {network}…',
  walletApproving: 'Confirm the spending approval in your wallet…',
  walletApprovalMining: 'Waiting for the approval to be mined…',
  walletPaying: 'Confirm the payment in your wallet…',
  walletSent: 'Transaction sent',
  walletRejected: 'The request was rejected in your wallet. You can try again.',
  walletWrongChain: 'Your wallet could not switch to {network}. Add that network to your wallet and try again.',
  walletFailed: 'The wallet reported an error: {message}',
  walletUnavailable: 'No browser wallet was found.',
  txHash: 'Transaction',

  // Confirmations and the end states
  detectedTitle: 'Payment received',
  confirmations: '{count} / {required} confirmations',
  confirmationsHelp: 'Your payment is on its way. This page updates by itself; you can keep it open.',
  successTitle: 'Payment complete',
  successRedirect: 'Thank you! Taking you back to {merchant}…',
  successNoRedirect: 'Thank you! You can close this page.',
  returnNow: 'Return to {merchant}',
  expiredPaymentTitle: 'Payment window expired — start again',
  expiredPaymentText: 'The address is no longer valid. Do not send anything to it. Start again to get a new one.',
  startAgain: 'Start again',
  failedTitle: 'The payment did not go through',
  failedText: 'The transaction failed on the network. No payment was recorded. You can start again.',

  // Whole-page states (server-rendered)
  notFoundTitle: 'Payment request not found',
  notFoundText: 'This link does not match any payment request. Check the link you were given, or ask the merchant for a new one.',
  expiredTitle: 'This payment request has expired',
  expiredText: 'It can no longer be paid. Please return to the merchant to start a new order.',
  cancelledTitle: 'This payment request was cancelled',
  cancelledText: 'It can no longer be paid. Please return to the merchant if you still want to order.',
  paidTitle: 'This invoice is already paid',
  paidText: 'Thank you, nothing more to do here.',
  backToMerchant: 'Return to {merchant}',

  // Errors while the page runs
  errorTitle: 'Something went wrong',
  errorRetry: 'Try again',
  errorGeneric: 'Please try again in a moment.',
  errorNetwork: 'We could not reach the payment server. Check your connection and try again.',
  errorRateLimited: 'Too many requests. Please wait {seconds} seconds and try again.',
  errorUnavailable: 'That coin cannot be used right now: {message}',
  errorBusy: 'Another payment for this invoice is already in progress. Reloading…',
  time: '{minutes}:{seconds}',
  timeHours: '{hours}:{minutes}:{seconds}',
} as const;

export type Strings = { readonly [K in keyof typeof strings]: string };
