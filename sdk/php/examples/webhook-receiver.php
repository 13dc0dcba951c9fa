<?php

declare(strict_types=1);

// A plain PHP webhook endpoint with the PHP client: verify (php://input and the request headers),
// deduplicate on the event id, fulfil on payment.completed comparing amounts.
//   CHAINGATE_API_SECRET=… php -S 127.0.0.1:8000 webhook-receiver.php
// It also appends one JSON line per request to $CHAINGATE_RECEIVER_LOG, which
// test/integration/sdk-php.test.ts reads while a real `chaingate serve` delivers to it.

require __DIR__ . '/../autoload.php'; // or Composer's vendor/autoload.php

use Chaingate\Settlement;
use Chaingate\Webhook;
use Chaingate\WebhookVerificationException;

$log = static function (array $fields): void {
    $file = getenv('CHAINGATE_RECEIVER_LOG');
    $fields['headers'] = Webhook::headersFromServer($_SERVER);
    $fields['body'] = base64_encode((string) file_get_contents('php://input'));
    if ($file) {
        file_put_contents($file, json_encode($fields, JSON_UNESCAPED_SLASHES) . "\n", FILE_APPEND | LOCK_EX);
    }
};

try {
    $event = Webhook::verifyRequest((string) getenv('CHAINGATE_API_SECRET'));
} catch (WebhookVerificationException $e) {
    $log(['verdict' => 'refused', 'reason' => $e->getReason()]);
    http_response_code(400);
    exit($e->getReason());
}

// Use a table with a unique event id in production; a file of seen ids shows the idea.
$seen = sys_get_temp_dir() . '/chaingate-seen-' . md5((string) getenv('CHAINGATE_API_SECRET'));
$ids = is_file($seen) ? file($seen, FILE_IGNORE_NEW_LINES) : [];
if (in_array($event['id'], $ids, true)) {
    $log(['verdict' => 'duplicate', 'eventId' => $event['id'], 'type' => $event['type']]);
    exit('duplicate');
}
$decision = null;
if ($event['type'] === 'payment.completed') { // the one signal to fulfil on
    $s = Settlement::of($event['data']['payment']);
    $decision = ['settlement' => $s->status, 'difference' => $s->difference];
}
file_put_contents($seen, $event['id'] . "\n", FILE_APPEND | LOCK_EX);
$log(['verdict' => 'ok', 'eventId' => $event['id'], 'type' => $event['type'], 'decision' => $decision]);
echo 'ok';
