import Testing
@testable import ImgWarmKit

@Suite struct UnitsTests {
    @Test(arguments: [
        ("0", UInt64(0)), ("1234", 1234), ("500M", 500_000_000), ("500MB", 500_000_000), ("2GiB", 2 << 30),
        ("1k", 1000), ("1KiB", 1024), ("20G", 20_000_000_000), ("1.5M", 1_500_000), ("3T", 3_000_000_000_000),
        ("64MiB", 64 << 20), (" 7 G ", 7_000_000_000),
    ])
    func sizes(text: String, bytes: UInt64) throws {
        #expect(try Units.parseSize(text) == bytes)
    }

    @Test(arguments: ["", "abc", "-5M", "5X", "1.5", "M"])
    func badSizes(text: String) {
        #expect(throws: Units.ParseError.self) { try Units.parseSize(text) }
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

    @Test(arguments: [("30", 30.0), ("30s", 30), ("5m", 300), ("12h", 43200), ("7d", 604800), ("2w", 1209600), ("1.5h", 5400)])
    func durations(text: String, seconds: Double) throws {
        #expect(try Units.parseDuration(text) == seconds)
    }

    @Test(arguments: ["", "d", "7y", "-1d", "soon"])
    func badDurations(text: String) {
        #expect(throws: Units.ParseError.self) { try Units.parseDuration(text) }
    }
}
