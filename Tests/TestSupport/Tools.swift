import Foundation
import Testing

/// Runs a helper program (mount, openssl, an example script, ...) and
/// returns its status and output (stdout and stderr together); nil when it
/// cannot be started. `environment` adds to the test's own; `directory` is
/// its working folder.
@discardableResult
public func runTool(_ path: String, _ args: [String], environment: [String: String] = [:],
                    directory: String? = nil) -> (status: Int32, output: String)? {
    guard FileManager.default.isExecutableFile(atPath: path) else { return nil }
    let p = Process()
    p.executableURL = URL(fileURLWithPath: path)
    p.arguments = args
    if !environment.isEmpty {
        p.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    }
    if let directory { p.currentDirectoryURL = URL(fileURLWithPath: directory) }
    let out = Pipe()
    p.standardOutput = out
    p.standardError = out
    guard (try? p.run()) != nil else { return nil }
    let data = out.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return (p.terminationStatus, String(decoding: data, as: UTF8.self))
}

/// The first of `names` found on the usual PATH directories.
public func findTool(_ names: String...) -> String? {
    let dirs = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
        + ["/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"]
    for name in names {
        for dir in dirs where FileManager.default.isExecutableFile(atPath: dir + "/" + name) {
            return dir + "/" + name
        }
    }
    return nil
}

/// The lowercase hex digest of `text`'s UTF-8 bytes by a coreutils tool
/// (`sha256sum`, `sha1sum`, `md5sum`): an implementation independent of the
/// one imgwarm uses, for checking cache file names. Fed through a file, so
/// no shell quoting is involved. Nil when the tool cannot be run.
public func coreutilsDigest(_ tool: String, of text: String) -> String? {
    guard let path = findTool(tool) else { return nil }
    let file = NSTemporaryDirectory() + "imgwarm-digest-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString.prefix(8))"
    guard FileManager.default.createFile(atPath: file, contents: Data(text.utf8)) else { return nil }
    defer { try? FileManager.default.removeItem(atPath: file) }
    guard let result = runTool(path, [file]), result.status == 0 else { return nil }
    return String(result.output.prefix { $0 != " " })
}

/// Whether this is a CI run (env `CI=true`, as `.ci/run` and CI services
/// set it): there a missing tool fails the test that needs it.
public var isCI: Bool { ProcessInfo.processInfo.environment["CI"] == "true" }

/// What a test needs that the build does not provide (a program, a
/// library, a privilege) is missing. The error a test fails with under CI.
public struct MissingPrerequisite: Error, CustomStringConvertible {
    public let description: String
}

/// The missing-tool rule, the only copy of it: a test whose prerequisite
/// is missing never passes. On a developer machine it shows as skipped,
/// with `what` as the reason; under CI, which installs everything
/// (scripts/setup.sh), it fails. Called when the test is already running:
/// the test stops here either way.
public func prerequisiteMissing(_ what: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> Never {
    if isCI { throw MissingPrerequisite(description: what + " (CI=true: scripts/setup.sh installs it)") }
    try Test.cancel(Comment(rawValue: what + " (install it, or run scripts/setup.sh)"), sourceLocation: sourceLocation)
}

/// The path of a tool the running test needs: the first of `names` found.
/// Missing: `prerequisiteMissing` (skipped here, failed under CI).
public func neededTool(_ names: String..., for purpose: String,
                       sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
    for name in names {
        if let path = findTool(name) { return path }
    }
    try prerequisiteMissing("\(names.joined(separator: " or ")) not found: \(purpose) did not run", sourceLocation: sourceLocation)
}

/// The same rule as a trait, decided before the test starts: the test is
/// skipped with `reason` when `available` is false; under CI the condition
/// throws instead, which fails the test.
public func prerequisiteAvailable(_ available: Bool, _ reason: String) throws -> Bool {
    if available { return true }
    if isCI { throw MissingPrerequisite(description: reason + " (CI=true: scripts/setup.sh installs it)") }
    return false
}

extension Trait where Self == ConditionTrait {
    /// `@Test(.needsTools("nginx", "openssl", for: "the TLS tests"))`: every
    /// one of `names` must be found.
    public static func needsTools(_ names: String..., for purpose: String,
                                  sourceLocation: SourceLocation = #_sourceLocation) -> Self {
        let reason = "needs \(names.joined(separator: " and ")): \(purpose) did not run"
        return .enabled(if: try prerequisiteAvailable(names.allSatisfy { findTool($0) != nil }, reason),
                        Comment(rawValue: reason), sourceLocation: sourceLocation)
    }

    /// A prerequisite other than a program on PATH (a privilege, a server,
    /// a library): skipped with `reason` when `available` is false, failed
    /// under CI.
    public static func needs(_ available: @autoclosure @escaping @Sendable () -> Bool, _ reason: String,
                             sourceLocation: SourceLocation = #_sourceLocation) -> Self {
        .enabled(if: try prerequisiteAvailable(available(), reason), Comment(rawValue: reason), sourceLocation: sourceLocation)
    }
}

/// Runs the binary so that permission bits bind it. Root passes any
/// folder, so as root it runs under setpriv with the two capabilities that
/// bypass permission checks (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH) dropped
/// from its bounding set. Its stdout and stderr together (an error must be
/// all there is). Without setpriv the test is skipped (failed under CI).
public func runBoundByPermissions(_ args: [String], why: String) throws -> (status: Int32, output: String) {
    if geteuid() == 0 {
        let setpriv = try neededTool("setpriv", for: why)
        let run = try #require(runTool(setpriv, ["--bounding-set=-dac_override,-dac_read_search", "--",
                                                 BinaryRunner.executable] + args))
        return (run.status, run.output)
    }
    let run = try BinaryRunner.run(args)
    return (run.status, run.stdout + run.stderr)
}
