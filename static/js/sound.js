// Short synthesized sounds (no audio files to download). Browsers only allow audio after
// a gesture, so the context is created on the first tap or key press.

import { load, save } from "./storage.js";

let context = null;
let muted = load("muted", false);

export const isMuted = () => muted;

export function setMuted(value) {
  muted = Boolean(value);
  save("muted", muted);
}

export function unlockAudio() {
  if (context) {
    if (context.state === "suspended") context.resume();
    return;
  }
  const AudioContext = window.AudioContext || window.webkitAudioContext;
  if (AudioContext) context = new AudioContext();
}

function tone({ type = "sine", from, to = from, duration, volume = 0.2, delay = 0 }) {
  const start = context.currentTime + delay;
  const osc = context.createOscillator();
  const gain = context.createGain();
  osc.type = type;
  osc.frequency.setValueAtTime(from, start);
  osc.frequency.exponentialRampToValueAtTime(to, start + duration);
  gain.gain.setValueAtTime(volume, start);
  gain.gain.exponentialRampToValueAtTime(0.001, start + duration);
  osc.connect(gain).connect(context.destination);
  osc.start(start);
  osc.stop(start + duration + 0.02);
}

function noise({ duration, volume = 0.3, frequency = 1800, delay = 0 }) {
  const start = context.currentTime + delay;
  const length = Math.ceil(context.sampleRate * duration);
  const buffer = context.createBuffer(1, length, context.sampleRate);
  const data = buffer.getChannelData(0);
  for (let i = 0; i < length; i += 1) data[i] = (Math.random() * 2 - 1) * (1 - i / length);
  const source = context.createBufferSource();
  const filter = context.createBiquadFilter();
  const gain = context.createGain();
  source.buffer = buffer;
  filter.type = "bandpass";
  filter.frequency.value = frequency;
  gain.gain.value = volume;
  source.connect(filter).connect(gain).connect(context.destination);
  source.start(start);
}

const SOUNDS = {
  flip: () => noise({ duration: 0.07, volume: 0.35, frequency: 2500 }),
  slap: () => {
    noise({ duration: 0.12, volume: 0.6, frequency: 900 });
    tone({ type: "triangle", from: 180, to: 60, duration: 0.12, volume: 0.35 });
  },
  jack: () => tone({ type: "square", from: 880, to: 1320, duration: 0.09, volume: 0.08 }),
  take: () => {
    tone({ from: 523, duration: 0.09, volume: 0.15 });
    tone({ from: 784, duration: 0.14, volume: 0.15, delay: 0.08 });
  },
  wrong: () => tone({ type: "sawtooth", from: 160, to: 90, duration: 0.3, volume: 0.12 }),
  late: () => tone({ from: 440, to: 330, duration: 0.15, volume: 0.1 }),
  turn: () => tone({ from: 660, duration: 0.06, volume: 0.08 }),
  win: () => {
    [523, 659, 784, 1047].forEach((f, i) => tone({ type: "triangle", from: f, duration: 0.22, volume: 0.16, delay: i * 0.11 }));
  },
};

export function play(name) {
  if (muted || !context || context.state !== "running" || !SOUNDS[name]) return;
  try {
    SOUNDS[name]();
  } catch {
    // audio is a nicety; never let it break the game
  }
}
