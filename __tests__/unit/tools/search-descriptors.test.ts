// The descriptors a content search over a tree may hold besides its walk's (tools/shared.ts), at each side of its limits.
import { expect, it } from "vitest";
import { searchDescriptors } from "../../../src/tools/shared.js";

it("gives a batch a 32nd of the open-file limit (4 at least) and the walk an eighth of that to open ahead (32 at most, none under 8)", () => {
  const cases: [number, { batchFds: number; openAhead: number }][] = [
    [Infinity, { batchFds: 256, openAhead: 32 }],
    [1_048_576, { batchFds: 32_768, openAhead: 32 }],
    [8192, { batchFds: 256, openAhead: 32 }],
    [1024, { batchFds: 32, openAhead: 4 }],
    [256, { batchFds: 8, openAhead: 1 }],
    [255, { batchFds: 7, openAhead: 0 }],
    [64, { batchFds: 4, openAhead: 0 }],
    [10, { batchFds: 4, openAhead: 0 }],
  ];
  for (const [limit, expected] of cases) expect(searchDescriptors(limit), String(limit)).toEqual(expected);
});
