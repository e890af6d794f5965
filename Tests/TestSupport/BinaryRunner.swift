import Foundation

/// Runs the real `imgwarm` binary, as a user or a CI job would. Shared by
/// the end-to-end and reliability tests (public for that reason).
public struct BinaryRunner {
    public struct Result: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
        public var signalled: Bool
    }

    /// The package's root folder (this file is Tests/TestSupport/BinaryRunner.swift).
    public static let packageRoot: String = {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    }()

    /// The `imgwarm` executable built next to the test bundle: the one way
    /// the tests find the binary (`swift build --build-tests` makes it).
    public static let executable: String = {
        var candidates: [String] = []
        if let exe = Bundle.main.executablePath {
            candidates.append((exe as NSString).deletingLastPathComponent + "/imgwarm")
        }
        let args0 = CommandLine.arguments[0]
        var dir = (args0 as NSString).deletingLastPathComponent
        for _ in 0..<4 {
            candidates.append(dir + "/imgwarm")
            dir = (dir as NSString).deletingLastPathComponent
        }
        candidates.append(packageRoot + "/.build/debug/imgwarm")
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) } ?? candidates.last!
    }()

    public static let examplesDirectory: String = packageRoot + "/examples"

    /// The binary is missing: the tests ran without `swift build --build-tests`.
    public struct NotBuilt: Error, CustomStringConvertible {
        public var description: String { "\(BinaryRunner.executable) does not exist: run swift build --build-tests first" }
    }

    /// Runs `imgwarm args...`; `stdin` is written to its standard input.
    /// Killed after `timeout` seconds so a hang fails the test instead of CI.
    @discardableResult
    public static func run(_ args: [String], stdin: String? = nil, environment: [String: String] = [:], timeout: Double = 120) throws -> Result {
        let p = try start(args, stdin: stdin, environment: environment)
        return p.wait(timeout: timeout)
    }

    public static func start(_ args: [String], stdin: String? = nil, environment: [String: String] = [:]) throws -> Running {
        guard FileManager.default.isExecutableFile(atPath: executable) else { throw NotBuilt() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = args
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }
        process.environment = env
        let out = Pipe(), err = Pipe(), inPipe = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = inPipe
        let running = Running(process: process, out: out, err: err)
        try process.run()
        running.startReading()
        if let stdin { inPipe.fileHandleForWriting.write(Data(stdin.utf8)) }
        try? inPipe.fileHandleForWriting.close()
        return running
    }

    public final class Running: @unchecked Sendable {
        public let process: Process
        private let out: Pipe
        private let err: Pipe
        private var outData = Data()
        private var errData = Data()
        private let group = DispatchGroup()

        fileprivate init(process: Process, out: Pipe, err: Pipe) {
            self.process = process
            self.out = out
            self.err = err
        }

        fileprivate func startReading() {
            group.enter()
            DispatchQueue.global().async {
                self.outData = self.out.fileHandleForReading.readDataToEndOfFile()
                self.group.leave()
            }
            group.enter()
            DispatchQueue.global().async {
                self.errData = self.err.fileHandleForReading.readDataToEndOfFile()
                self.group.leave()
            }
        }

        public func signal(_ sig: Int32) { kill(process.processIdentifier, sig) }

        public func wait(timeout: Double) -> Result {
            let deadline = Date().addingTimeInterval(timeout)
            while process.isRunning && Date() < deadline { usleep(10_000) }
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
            }
            process.waitUntilExit()
            group.wait()
            return Result(status: process.terminationStatus,
                          stdout: String(decoding: outData, as: UTF8.self),
                          stderr: String(decoding: errData, as: UTF8.self),
                          signalled: process.terminationReason == .uncaughtSignal)
        }
    }
}
