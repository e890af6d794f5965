import Testing
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm

/// A `cacheObject` row checked as data, by table: the types
/// Baseflow/flutter_cache_manager's
/// flutter_cache_manager/lib/src/storage/cache_object.dart `CacheObject.fromMap`
/// reads, a non-null key, and a relativePath that is one plain file name.
@Suite struct FlutterCacheRowsTests {
    static func row(id: FlutterColumnValue = .integer(7), url: FlutterColumnValue = .text("http://h/a.png"),
                    key: FlutterColumnValue = .text("http://h/a.png"), path: FlutterColumnValue = .text("0b1c.png"),
                    touched: FlutterColumnValue = .integer(5), length: FlutterColumnValue = .integer(10),
                    validTill: FlutterColumnValue = .integer(0), eTag: FlutterColumnValue = .null) -> [FlutterColumnValue] {
        [id, url, key, path, touched, length, validTill, eTag]
    }

    @Test(arguments: [
        (row(), nil),
        (row(length: .null), nil),
        (row(eTag: .text("\"v1\"")), nil),
        (row(id: .null), "row _id NULL: _id is not an integer"),
        (row(key: .null), "row _id 7: key is NULL, not text"),
        (row(url: .integer(3)), "row _id 7: url is 3, not text"),
        (row(path: .null), "row _id 7: relativePath is NULL, not text"),
        (row(path: .blob([0x61])), "row _id 7: relativePath is a blob, not text"),
        (row(path: .text("/etc/passwd")), "row _id 7: relativePath is not one plain file name"),
        (row(path: .text("../x.png")), "row _id 7: relativePath is not one plain file name"),
        (row(path: .text("..")), "row _id 7: relativePath is not one plain file name"),
        (row(path: .text(".")), "row _id 7: relativePath is not one plain file name"),
        (row(path: .text(".hidden")), "row _id 7: relativePath is not one plain file name"),
        (row(path: .text("a\u{0}b")), "row _id 7: relativePath is not one plain file name"),
        (row(path: .text("")), "row _id 7: relativePath is not one plain file name"),
        (row(touched: .null), "row _id 7: touched is NULL, not an integer"),
        (row(touched: .text("now")), "row _id 7: touched is text, not an integer"),
        (row(length: .integer(-1)), "row _id 7: length -1 is negative"),
        (row(length: .real(1.5)), "row _id 7: length is 1.5, not an integer"),
        (row(validTill: .null), "row _id 7: validTill is NULL, not an integer"),
        (row(eTag: .integer(1)), "row _id 7: eTag is 1, not text"),
    ] as [([FlutterColumnValue], String?)])
    func rowTable(values: [FlutterColumnValue], refusal: String?) {
        do {
            let row = try FlutterCacheRow.validated(values)
            #expect(refusal == nil, "accepted \(row)")
        } catch {
            #expect("\(error)".hasPrefix(refusal ?? "(accepted)"), "\(error)")
        }
    }

    /// `_cleanupCache`'s choice, with times at the ends of Int64: no trap.
    @Test func doomedRowsAtTheEndsOfTime() throws {
        let rows = try [0, 1, 2].map { i in
            try FlutterCacheRow.validated(Self.row(id: .integer(Int64(i)), key: .text("k\(i)"), path: .text("f\(i)"),
                                                   touched: .integer([Int64.min, 0, Int64.max][i])))
        }
        #expect(FlutterCacheRow.doomed(rows, now: Int64.min, staleMilliseconds: .max, capacity: 0, keep: { _ in false }).isEmpty)
        let all = FlutterCacheRow.doomed(rows, now: Int64.max, staleMilliseconds: 0, capacity: 0, keep: { _ in false })
        #expect(all.map(\.row.id) == [0, 1])
        #expect(FlutterCacheRow.doomed(rows, now: Int64.max, staleMilliseconds: 0, capacity: 5, keep: { $0 == "k0" }).map(\.row.id) == [1])
        #expect(FlutterCacheRow.totalLength(rows) == 30)
    }

    /// `cache prune --layout flutter` over 50,000 rows: which rows go is
    /// decided with each row looked at a bounded number of times (the pin
    /// check once per doomed row), well under a second even in a debug build.
    @Test func fiftyThousandRowsAreJudgedInLinearTime() throws {
        let day: Int64 = 86_400_000, now: Int64 = 400 * day
        let rows = try (0..<50_000).map { i in
            try FlutterCacheRow.validated(Self.row(id: .integer(Int64(i)), key: .text("k\(i)"), path: .text("f\(i).png"),
                                                   touched: .integer(now - Int64(i % 100) * day)))
        }
        var pinChecks = 0
        let clock = ContinuousClock()
        var doomed: [(row: FlutterCacheRow, reason: PruneResult.Reason)] = []
        let elapsed = clock.measure {
            doomed = FlutterCacheRow.doomed(rows, now: now, staleMilliseconds: 30 * day, capacity: 200) { key in
                pinChecks += 1
                return key == "k99"
            }
        }
        // Touched 0...99 days ago, 500 rows a day: 49,000 more than a day
        // ago, all but the 200 most recent of them over capacity (the stale
        // ones among them); one of those is pinned and stays.
        #expect(doomed.count == 48_799)
        #expect(pinChecks <= rows.count)
        #expect(elapsed < .seconds(1), "\(elapsed)")
    }
}
