// NoteList: at most NOTES_PER_CODE messages per code, the rest counted in one closing note per code.
import { describe, expect, it } from "vitest";
import { NOTES_PER_CODE, NoteList } from "../../../src/state/upgrade/note-list.js";

describe("NoteList", () => {
  it("keeps every note of a code up to the cap, in the order they came", () => {
    const notes = new NoteList();
    notes.add("a", "a1");
    notes.add("b", "b1");
    notes.add("a", "a2");
    expect(notes.list()).toEqual([
      { code: "a", message: "a1" },
      { code: "b", message: "b1" },
      { code: "a", message: "a2" },
    ]);
    expect(notes.count("a")).toBe(2);
  });

  it("lists the first NOTES_PER_CODE of a code and counts the rest in one note", () => {
    const notes = new NoteList();
    for (let i = 0; i < NOTES_PER_CODE + 7; i += 1) notes.add("many", `m${i}`);
    notes.add("one", "only");
    const list = notes.list();
    expect(list.filter((n) => n.code === "many")).toHaveLength(NOTES_PER_CODE + 1);
    expect(list[NOTES_PER_CODE - 1]).toEqual({ code: "many", message: `m${NOTES_PER_CODE - 1}` });
    expect(list[NOTES_PER_CODE]).toEqual({ code: "one", message: "only" });
    expect(list.at(-1)).toEqual({ code: "many", message: `7 more note(s) like the ${NOTES_PER_CODE} above (many) are not listed: ${NOTES_PER_CODE + 7} in all.` });
    expect(notes.count("many")).toBe(NOTES_PER_CODE + 7);
  });
});
