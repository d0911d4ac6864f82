/** What the modules log through: the extension passes its "torchlint" log channel, tests a fake. */
export interface Logger {
    info(message: string): void;
    warn(message: string): void;
    error(message: string): void;
}

/** A logger that drops everything. */
export const silentLogger: Logger = {
    info: () => undefined,
    warn: () => undefined,
    error: () => undefined,
};
