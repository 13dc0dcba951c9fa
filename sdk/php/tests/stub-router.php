<?php

declare(strict_types=1);

// A scripted gateway for tests/run.php under `php -S`: answers from the state file's `answers`
// (status, body, headers) in order and records every request in its `seen`.

$file = getenv('CHAINGATE_STUB_STATE');
$fp = fopen($file, 'c+');
flock($fp, LOCK_EX);
$state = json_decode(stream_get_contents($fp), true);
$headers = [];
foreach ($_SERVER as $name => $value) {
    if (str_starts_with($name, 'HTTP_')) {
        $headers[strtolower(str_replace('_', '-', substr($name, 5)))] = $value;
    }
}
if (isset($_SERVER['CONTENT_TYPE'])) {
    $headers['content-type'] = $_SERVER['CONTENT_TYPE'];
}
$state['seen'][] = ['method' => $_SERVER['REQUEST_METHOD'], 'path' => $_SERVER['REQUEST_URI'], 'headers' => $headers, 'body' => file_get_contents('php://input')];
$answer = array_shift($state['answers']) ?? ['status' => 500, 'body' => 'no answer left', 'headers' => []];
ftruncate($fp, 0);
rewind($fp);
fwrite($fp, json_encode($state));
flock($fp, LOCK_UN);
fclose($fp);

http_response_code($answer['status']);
header('Content-Type: application/json');
foreach ($answer['headers'] ?? [] as $name => $value) {
    header("{$name}: {$value}");
}
echo is_string($answer['body']) ? $answer['body'] : json_encode($answer['body']);
