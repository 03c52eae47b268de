// Output.choose: answers only with a listed value, never prompts when it cannot.
import { describe, expect, it } from "vitest";
import { createCaptureOutput } from "../../src/cli/output.js";

const choices = [
  { value: "a", label: "a", hint: "first" },
  { value: "b", label: "b" },
] as const;

describe("Output.choose", () => {
  it("returns the listed value the prompt picked", async () => {
    const { output } = createCaptureOutput({}, ["b"]);
    expect(await output.choose("Which?", choices)).toBe("b");
  });

  it("treats an unlisted answer or a cancelled prompt as undefined", async () => {
    const { output } = createCaptureOutput({}, ["zzz", true]);
    expect(await output.choose("Which?", choices)).toBeUndefined();
    expect(await output.choose("Which?", choices)).toBeUndefined();
  });

  it("never asks when it cannot prompt", async () => {
    const answers: Array<boolean | string> = ["a"];
    const { output } = createCaptureOutput({ canPrompt: false }, answers);
    expect(await output.choose("Which?", choices)).toBeUndefined();
    expect(answers).toEqual(["a"]);
  });
});
