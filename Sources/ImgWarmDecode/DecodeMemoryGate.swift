import Foundation

/// `--decode-memory`: the memory all decoders of the process may hold at
/// once. Each image takes its estimated share (`DecodeMemory.estimate`)
/// before its decoder allocates anything and gives it back when done; an
/// image whose share is not free waits, one larger than the whole budget
/// is refused. Without it, six 9999x9999 progressive JPEGs (1.1 MB each)
/// validated at once needed 1.2 GB, and a pod with a memory limit was
/// killed.
///
/// Not `BudgetGate` (`--budget`): that one decides once per entry, in feed
/// order, whether a file fits on disk for good; this one lends memory for
/// the span of a decode and takes it back, and its order is that of the
/// decodes that ask.
///
/// Shares are granted first come, first served: a large image waiting for
/// room is not overtaken by smaller ones that would keep the room from
/// ever coming free. Waiting cannot deadlock: an image waits only while
/// other decodes hold memory, and those end without waiting for anything.
public final class DecodeMemoryGate: @unchecked Sendable {
    public let limit: UInt64
    private let condition = NSCondition()
    private var held: UInt64 = 0
    private var peak: UInt64 = 0
    /// The next ticket to hand out, and the one whose turn it is.
    private var issued: UInt64 = 0
    private var serving: UInt64 = 0

    public init(limit: UInt64) {
        self.limit = limit
    }

    /// The most that shares added up to at any moment (tests).
    public var peakHeld: UInt64 {
        condition.lock()
        defer { condition.unlock() }
        return peak
    }

    /// Runs `body` holding `bytes` of the budget, after waiting for them
    /// to be free; nil, without running it, when `bytes` is more than the
    /// whole budget.
    public func withShare<T>(_ bytes: UInt64, _ body: () throws -> T) rethrows -> T? {
        guard bytes <= limit else { return nil }
        condition.lock()
        let ticket = issued
        issued += 1
        while serving != ticket || held + bytes > limit { condition.wait() }
        held += bytes
        peak = max(peak, held)
        serving += 1
        // The next ticket may fit too.
        condition.broadcast()
        condition.unlock()
        defer {
            condition.lock()
            held -= bytes
            condition.broadcast()
            condition.unlock()
        }
        return try body()
    }
}

/// The default of `--decode-memory`: a quarter of the memory the process
/// may use (the limit of its cgroup, or the machine's RAM when lower or
/// unlimited), at most 1 GiB. A quarter leaves the rest to the bodies in
/// flight, the plan, libcurl and the page cache a container is charged for.
public enum DecodeMemoryDefault {
    public static let cap: UInt64 = 1 << 30

    public static func bytes(limit: UInt64?, ram: UInt64) -> UInt64 {
        let usable = min(limit ?? ram, ram)
        return max(1, min(cap, usable / 4))
    }

    /// For this process: its cgroup's limit from /proc/self/cgroup and
    /// /sys/fs/cgroup, and the RAM.
    public static func current() -> UInt64 {
        let ram = UInt64(max(0, sysconf(Int32(_SC_PHYS_PAGES)))) * UInt64(max(0, sysconf(Int32(_SC_PAGESIZE))))
        let limit = CgroupMemory.limit(selfCgroup: read("/proc/self/cgroup") ?? "", read: read)
        return bytes(limit: limit, ram: ram == 0 ? cap * 4 : ram)
    }

    private static func read(_ path: String) -> String? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }
}

/// The memory limit of a process's cgroup, v2 or v1, read through `read`
/// (a file's text, or nil) so the decision is tested on tables.
public enum CgroupMemory {
    /// The lowest limit on the way from the process's cgroup up to the
    /// root (a pod's limit often sits on a parent of the container's
    /// cgroup); nil when there is none.
    public static func limit(selfCgroup: String, read: (String) -> String?) -> UInt64? {
        var lowest: UInt64?
        func take(_ value: UInt64?) {
            guard let value else { return }
            lowest = min(lowest ?? value, value)
        }
        for line in selfCgroup.split(separator: "\n") {
            // hierarchy-ID:controllers:path
            let parts = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3 else { continue }
            let controllers = parts[1].split(separator: ","), path = String(parts[2])
            if parts[0] == "0" && parts[1].isEmpty {
                for dir in ancestors(path) { take(parse(read("/sys/fs/cgroup\(dir)/memory.max"))) }
            } else if controllers.contains("memory") {
                // A container sees its own cgroup at the mount's root, while
                // /proc/self/cgroup may name the host's path: both are read.
                for dir in ancestors(path) {
                    take(parse(read("/sys/fs/cgroup/memory\(dir)/memory.limit_in_bytes")))
                }
            }
        }
        return lowest
    }

    /// `/a/b` -> `/a/b`, `/a`, `` (the root, as a suffix of the mount).
    static func ancestors(_ path: String) -> [String] {
        var result: [String] = []
        var components = path.split(separator: "/").map(String.init)
        while true {
            result.append(components.isEmpty ? "" : "/" + components.joined(separator: "/"))
            if components.isEmpty { break }
            components.removeLast()
        }
        return result
    }

    /// `max` (v2) and v1's "unlimited" (a page-rounded 2^63) are no limit.
    static func parse(_ text: String?) -> UInt64? {
        guard let text, let value = UInt64(text.trimmingCharacters(in: .whitespacesAndNewlines)) else { return nil }
        return value >= 1 << 62 ? nil : value
    }
}
