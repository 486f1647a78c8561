/** scripts/coverage.ts: lcov per room, the table, and the floors of docs/testing-coverage.md. */
import assert from "node:assert/strict";
import { parseFloors, parseLcov, percent, perRoom, table, underFloor } from "../../scripts/coverage.ts";
import { ROOT } from "../helpers.ts";

const LCOV = `SF:/r/src/auth/login.ts
BRF:4
BRH:1
LF:100
LH:25
end_of_record
SF:/r/src/auth/provider.ts
BRF:0
BRH:0
LF:50
LH:50
end_of_record
SF:/r/src/types.ts
LF:10
LH:10
end_of_record
SF:/r/tests/helpers.ts
LF:7
LH:1
end_of_record
`;

Deno.test("parseLcov() and perRoom(): src/ files summed per room; files outside src/ left out", () => {
  const files = parseLcov(LCOV);
  assert.deepEqual([...files.keys()], ["auth/login.ts", "auth/provider.ts", "types.ts"]);
  assert.deepEqual(Object.fromEntries(perRoom(files)), {
    auth: { linesFound: 150, linesHit: 75, branchesFound: 4, branchesHit: 1 },
    main: { linesFound: 10, linesHit: 10, branchesFound: 0, branchesHit: 0 },
  });
  assert.equal(percent(1, 3), 33.3);
  assert.equal(percent(0, 0), 100);
  assert.equal(
    table(perRoom(files)),
    [
      "| room | lines | line % | branch % |",
      "|---|---:|---:|---:|",
      "| auth | 75/150 | 50.0 | 25.0 |",
      "| main | 10/10 | 100.0 | 100.0 |",
      "| **all** | 85/160 | 53.1 | 25.0 |",
    ].join("\n"),
  );
});

Deno.test("the floors of docs/testing-coverage.md are read, and a room under its floor is named", async () => {
  const floors = parseFloors(await Deno.readTextFile(`${ROOT}docs/testing-coverage.md`));
  assert.ok(floors.size >= 10, `floors: ${[...floors.keys()]}`);
  for (const [room, floor] of floors) assert.ok(floor > 0 && floor <= 100, `${room}: ${floor}`);
  const rooms = perRoom(parseLcov(LCOV));
  assert.deepEqual(underFloor(rooms, new Map([["auth", 60], ["main", 90]])), [
    "auth: 50.0% of lines, under its floor of 60%",
  ]);
  assert.deepEqual(underFloor(rooms, new Map([["nowhere", 1]])), [
    "nowhere: 0.0% of lines, under its floor of 1%",
  ]);
});
