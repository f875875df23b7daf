/** The bounding layer (SPEC §3), kept at its upstream-era path: see src/kernel/bounded.ts. */
export * from "./kernel/bounded.js";
