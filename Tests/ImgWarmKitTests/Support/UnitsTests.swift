import Testing
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm

@Suite struct UnitsTests {
    /// The size table, as curl reads `--max-filesize` and `--limit-rate`
    /// (curl/curl, docs/cmdline-opts/limit-rate.md: "1k" or "1K" is 1024
    /// bytes): a bare letter is a power of 1024, as is the IEC unit; only
    /// `kB MB GB TB` are powers of 1000.
    @Test(arguments: [
        ("0", UInt64(0)), ("1234", 1234), ("500B", 500), ("500b", 500),
        ("1k", 1024), ("1K", 1024), ("1m", 1 << 20), ("1M", 1 << 20), ("1g", 1 << 30), ("1G", 1 << 30),
        ("1t", 1 << 40), ("1T", 1 << 40),
        ("1KiB", 1024), ("1MiB", 1 << 20), ("2GiB", 2 << 30), ("1TiB", 1 << 40), ("64MiB", 64 << 20), ("1Mi", 1 << 20),
        ("1kB", 1000), ("1KB", 1000), ("500MB", 500_000_000), ("1GB", 1_000_000_000), ("3TB", 3_000_000_000_000),
        ("1.5M", 1_572_864), (" 7 G ", 7 << 30),
        // 20G was 20,000,000,000 bytes before: now 7.4% more.
        ("20G", 21_474_836_480),
    ] as [(String, UInt64)])
    func sizes(text: String, bytes: UInt64) throws {
        #expect(try Units.parseSize(text) == bytes)
    }

    @Test(arguments: ["", "abc", "-5M", "5X", "1.5", "M"])
    func badSizes(text: String) {
        #expect(throws: ImgWarmError.self) { try Units.parseSize(text) }
    }

    @Test func sizeErrorNamesTheValueAndTheUnits() {
        do {
            _ = try Units.parseSize("5X")
            Issue.record("expected an error")
        } catch {
            #expect("\(error)".contains("'5X'"))
            #expect("\(error)".contains("KiB"))
        }
    }

    /// The duration table: `m` and `min` are minutes; uppercase is
    /// accepted for all but `M`, which could be months.
    @Test(arguments: [("30", 30.0), ("30s", 30), ("30S", 30), ("5m", 300), ("5min", 300), ("5MIN", 300), ("5Min", 300),
                      ("12h", 43200), ("12H", 43200), ("7d", 604800), ("7D", 604800), ("2w", 1209600), ("2W", 1209600),
                      ("1.5h", 5400), ("0.5s", 0.5)] as [(String, Double)])
    func durations(text: String, seconds: Double) throws {
        #expect(try Units.parseDuration(text) == seconds)
    }

    @Test(arguments: ["", "d", "7y", "1M", "1mo", "1y", "-1d", "soon", "1ms", "5 minutes"])
    func badDurations(text: String) {
        #expect(throws: ImgWarmError.self) { try Units.parseDuration(text) }
    }

    /// A month or a minute: the message says how to write either.
    @Test(arguments: ["1M", "1mo", "1y"])
    func ambiguousDurationsSuggestMinOr30d(text: String) {
        do {
            _ = try Units.parseDuration(text)
            Issue.record("expected an error")
        } catch {
            #expect("\(error)".contains("1min") && "\(error)".contains("30d"), "\(error)")
        }
    }
}
