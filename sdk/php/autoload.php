<?php

declare(strict_types=1);

// For projects without Composer: `require __DIR__ . '/path/to/sdk/php/autoload.php';`.
// The same PSR-4 mapping as composer.json ("Chaingate\\" => "src/"); with Composer, use its
// vendor/autoload.php instead.

spl_autoload_register(static function (string $class): void {
    $prefix = 'Chaingate\\';
    if (strncmp($class, $prefix, strlen($prefix)) !== 0) {
        return;
    }
    $file = __DIR__ . '/src/' . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
    if (is_file($file)) {
        require $file;
    }
});
