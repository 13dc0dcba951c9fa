<?php

declare(strict_types=1);

// A walk through every gateway route with the PHP client, one JSON line per step.
//   CHAINGATE_URL=http://127.0.0.1:8080 CHAINGATE_API_KEY=… CHAINGATE_API_SECRET=… php walkthrough.php
// test/integration/sdk-php.test.ts runs it against a real `chaingate serve` and checks each line.

require __DIR__ . '/../autoload.php'; // or Composer's vendor/autoload.php

use Chaingate\ChaingateException;
use Chaingate\Client;
use Chaingate\Settlement;

$url = (string) getenv('CHAINGATE_URL');
$client = new Client($url, (string) getenv('CHAINGATE_API_KEY'), (string) getenv('CHAINGATE_API_SECRET'));
$run = bin2hex(random_bytes(4));

function step(string $name, array $fields = []): void
{
    echo json_encode(['step' => $name] + $fields, JSON_UNESCAPED_UNICODE | JSON_UNESCAPED_SLASHES), "\n";
}

function failure(ChaingateException $e): array
{
    return ['code' => $e->getCode(), 'status' => $e->getStatus(), 'requestId' => $e->getRequestId()];
}

// 1. An invoice, with the order's own Idempotency-Key: a retry of the same operation replays it.
$orderKey = "order-{$run}-1";
$input = ['orderId' => "order-{$run}-1", 'amount' => '2500', 'currency' => 'USD', 'description' => 'Zwei Becher ☕', 'metadata' => ['cart' => 'c-77']];
$invoice = $client->createInvoice($input, $orderKey);
step('created', ['id' => $invoice['id'], 'status' => $invoice['status'], 'amount' => $invoice['amount'], 'description' => $invoice['description'], 'metadata' => $invoice['metadata']]);
step('retried', ['id' => $client->createInvoice($input, $orderKey)['id']]);

// 2. The same key replays the stored answer byte for byte ($client->request gives the raw answer).
$payload = ['orderId' => "order-{$run}-2", 'amount' => '990', 'currency' => 'EUR'];
$first = $client->request('POST', '/api/v1/invoices', $payload, "order-{$run}-2");
$second = $client->request('POST', '/api/v1/invoices', $payload, "order-{$run}-2");
step('replayed', ['id' => $first->data['id'], 'sameBytes' => $first->body === $second->body, 'firstReplayed' => $first->replayed, 'secondReplayed' => $second->replayed, 'status' => $second->status]);

// 3. Reads before and after a gateway checkout.
step('invoiceStatus', $client->invoiceStatus($invoice['id']));
$checkout = $client->checkout($invoice['id'], ['blockchain' => 'ethereum', 'cryptoCurrency' => 'ETH'], "checkout-{$run}-1");
$payment = $checkout['payment'];
step('checkout', ['paymentId' => $payment['id'], 'address' => $payment['paymentAddress'], 'amount' => $payment['amount'], 'invoiceStatus' => $checkout['invoice']['status']]);
$full = $client->getInvoice($invoice['id']);
step('invoice', ['status' => $full['status'], 'payments' => count($full['payments'])]);
$listed = $client->listPayments(['status' => 'PENDING', 'take' => 5]);
step('listed', ['total' => $listed['pagination']['total'], 'ids' => array_column($listed['items'], 'id')]);
$read = $client->getPayment($payment['id']);
$settlement = Settlement::of($read);
step('payment', ['id' => $read['id'], 'status' => $read['status'], 'amount' => $read['amount'], 'receivedAmount' => $read['receivedAmount'], 'settlement' => $settlement->status, 'difference' => $settlement->difference]);
step('paymentStatus', $client->paymentStatus($payment['id']));
$keys = array_keys($read);
sort($keys);
step('refunds', ['keys' => $keys, 'refunds' => count($client->paymentRefunds($payment['id'])['items'])]);

// 4. Cancel the second invoice (the webhook receiver hears invoice.cancelled).
$cancelled = $client->cancelInvoice($first->data['id'], "cancel-{$run}-2");
step('cancelled', ['id' => $cancelled['id'], 'status' => $cancelled['status']]);

// 5. Errors carry the gateway's code, the HTTP status and the request id.
$attempts = [
    'wrongSecret' => static fn () => (new Client($url, (string) getenv('CHAINGATE_API_KEY'), 'not-the-secret'))->getInvoice($invoice['id']),
    'notFound' => static fn () => $client->getInvoice('doesnotexist0000000000000'),
    'keyReused' => static fn () => $client->createInvoice(['orderId' => 'another-order', 'amount' => '100', 'currency' => 'USD'], $orderKey),
    'cancelAgain' => static fn () => $client->cancelInvoice($first->data['id']),
];
foreach ($attempts as $name => $attempt) {
    try {
        $attempt();
    } catch (ChaingateException $e) {
        step($name, failure($e));
    }
}
