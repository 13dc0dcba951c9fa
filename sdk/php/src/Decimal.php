<?php

declare(strict_types=1);

namespace Chaingate;

/**
 * Exact arithmetic on non-negative decimal strings ("25", "0.000001"): with bcmath when the
 * extension is loaded, else on the digits themselves. Never a float.
 */
final class Decimal
{
    public static function isDecimal(mixed $value): bool
    {
        return is_string($value) && preg_match('/^[0-9]+(\.[0-9]+)?$/D', $value) === 1;
    }

    /** -1, 0 or 1. */
    public static function compare(string $a, string $b, ?bool $useBcmath = null): int
    {
        self::check($a);
        self::check($b);
        if ($useBcmath ?? extension_loaded('bcmath')) {
            return bccomp($a, $b, max(self::scale($a), self::scale($b)));
        }
        [$x, $y] = self::aligned($a, $b);
        return strcmp($x, $y) <=> 0;
    }

    /** $a − $b as a plain decimal string: no trailing zeros, "0" for zero, "-" when negative. */
    public static function subtract(string $a, string $b, ?bool $useBcmath = null): string
    {
        self::check($a);
        self::check($b);
        $scale = max(self::scale($a), self::scale($b));
        if ($useBcmath ?? extension_loaded('bcmath')) {
            return self::normalise(bcsub($a, $b, $scale));
        }
        [$x, $y] = self::aligned($a, $b);
        $cmp = strcmp($x, $y);
        if ($cmp === 0) {
            return '0';
        }
        [$big, $small, $sign] = $cmp > 0 ? [$x, $y, ''] : [$y, $x, '-'];
        $digits = '';
        $borrow = 0;
        for ($i = strlen($big) - 1; $i >= 0; $i--) {
            $d = (int) $big[$i] - (int) $small[$i] - $borrow;
            $borrow = $d < 0 ? 1 : 0;
            $digits = (string) ($d + 10 * $borrow) . $digits;
        }
        $whole = substr($digits, 0, strlen($digits) - $scale);
        $frac = substr($digits, strlen($digits) - $scale);
        return self::normalise($sign . ($whole === '' ? '0' : $whole) . ($scale > 0 ? '.' . $frac : ''));
    }

    /** "-000.500" → "-0.5", "-0.000" → "0". */
    public static function normalise(string $value): string
    {
        $negative = str_starts_with($value, '-');
        $value = ltrim($value, '-+');
        if (str_contains($value, '.')) {
            $value = rtrim(rtrim($value, '0'), '.');
        }
        $value = ltrim($value, '0');
        if ($value === '' || $value[0] === '.') {
            $value = '0' . $value;
        }
        return $negative && $value !== '0' ? '-' . $value : $value;
    }

    private static function check(string $value): void
    {
        if (!self::isDecimal($value)) {
            throw new \InvalidArgumentException('not a non-negative decimal string: ' . json_encode($value));
        }
    }

    private static function scale(string $value): int
    {
        $dot = strpos($value, '.');
        return $dot === false ? 0 : strlen($value) - $dot - 1;
    }

    /**
     * Both as digit strings of one length and one scale, so that string order is numeric order.
     *
     * @return array{0: string, 1: string}
     */
    private static function aligned(string $a, string $b): array
    {
        $scale = max(self::scale($a), self::scale($b));
        $digits = static function (string $v) use ($scale): string {
            $parts = explode('.', $v, 2);
            return ltrim($parts[0], '0') . str_pad($parts[1] ?? '', $scale, '0');
        };
        $x = $digits($a);
        $y = $digits($b);
        $len = max(strlen($x), strlen($y), $scale + 1);
        return [str_pad($x, $len, '0', STR_PAD_LEFT), str_pad($y, $len, '0', STR_PAD_LEFT)];
    }
}
