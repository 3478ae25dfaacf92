/**
 * Colour conversions as Home Assistant's util/color.py does them (Wide RGB D65, no gamut), so a
 * light reports hs_color, rgb_color and xy_color together whatever mode the device speaks, and a
 * turn_on colour the light cannot take is converted the way HA converts it.
 */

export type Rgb = [number, number, number];
export type Pair = [number, number];

const round = (v: number, digits: number) => Math.round(v * 10 ** digits) / 10 ** digits;

/** Python's colorsys.rgb_to_hsv (0..1 in, 0..1 out). */
function rgbToHsv(r: number, g: number, b: number): [number, number, number] {
  const max = Math.max(r, g, b),
    min = Math.min(r, g, b);
  const v = max;
  if (min === max) return [0, 0, v];
  const s = (max - min) / max;
  const rc = (max - r) / (max - min),
    gc = (max - g) / (max - min),
    bc = (max - b) / (max - min);
  let h = r === max ? bc - gc : g === max ? 2 + rc - bc : 4 + gc - rc;
  h = (((h / 6) % 1) + 1) % 1;
  return [h, s, v];
}

/** Python's colorsys.hsv_to_rgb. */
function hsvToRgb(h: number, s: number, v: number): [number, number, number] {
  if (s === 0) return [v, v, v];
  const i = Math.floor(h * 6);
  const f = h * 6 - i;
  const p = v * (1 - s),
    q = v * (1 - s * f),
    t = v * (1 - s * (1 - f));
  switch (((i % 6) + 6) % 6) {
    case 0:
      return [v, t, p];
    case 1:
      return [q, v, p];
    case 2:
      return [p, v, t];
    case 3:
      return [p, q, v];
    case 4:
      return [t, p, v];
    default:
      return [v, p, q];
  }
}

export function rgbToHs(rgb: Rgb): Pair {
  const [h, s] = rgbToHsv(rgb[0] / 255, rgb[1] / 255, rgb[2] / 255);
  return [round(h * 360, 3), round(s * 100, 3)];
}

export function hsToRgb(hs: Pair): Rgb {
  const [r, g, b] = hsvToRgb(hs[0] / 360, hs[1] / 100, 1);
  return [Math.trunc(r * 255), Math.trunc(g * 255), Math.trunc(b * 255)];
}

export function xyToRgb(xy: Pair, brightness = 255): Rgb {
  const Y = brightness / 255;
  if (Y === 0) return [0, 0, 0];
  const vY = xy[1] === 0 ? 1e-11 : xy[1];
  const X = (Y / vY) * xy[0];
  const Z = (Y / vY) * (1 - xy[0] - vY);
  let rgb = [
    X * 1.656492 - Y * 0.354851 - Z * 0.255038,
    -X * 0.707196 + Y * 1.655397 + Z * 0.036152,
    X * 0.051713 - Y * 0.121364 + Z * 1.01153,
  ]
    .map((c) => (c <= 0.0031308 ? 12.92 * c : 1.055 * c ** (1 / 2.4) - 0.055))
    .map((c) => Math.max(0, c));
  const max = Math.max(...rgb);
  if (max > 1) rgb = rgb.map((c) => c / max);
  return rgb.map((c) => Math.trunc(c * 255)) as Rgb;
}

export function rgbToXy(rgb: Rgb): Pair {
  if (rgb[0] + rgb[1] + rgb[2] === 0) return [0, 0];
  const [R, G, B] = rgb.map((c) => c / 255).map((c) => (c > 0.04045 ? ((c + 0.055) / 1.055) ** 2.4 : c / 12.92));
  const X = R * 0.664511 + G * 0.154324 + B * 0.162028;
  const Y = R * 0.283881 + G * 0.668433 + B * 0.047685;
  const Z = R * 0.000088 + G * 0.07231 + B * 0.986039;
  return [round(X / (X + Y + Z), 3), round(Y / (X + Y + Z), 3)];
}

export const xyToHs = (xy: Pair): Pair => rgbToHs(xyToRgb(xy));
export const hsToXy = (hs: Pair): Pair => rgbToXy(hsToRgb(hs));

/** The colour attributes HA shows for a light in `mode` (light/__init__.py _light_internal_convert_color). */
export function colorAttributes(mode: 'hs' | 'xy' | 'rgb', v: Pair | Rgb): Record<string, unknown> {
  if (mode === 'hs') {
    const hs = v as Pair;
    const xy = hsToXy(hs);
    return {
      hs_color: [round(hs[0], 3), round(hs[1], 3)],
      rgb_color: hsToRgb(hs),
      xy_color: [round(xy[0], 6), round(xy[1], 6)],
    };
  }
  if (mode === 'xy') {
    const xy = v as Pair;
    const hs = xyToHs(xy);
    return { hs_color: hs, rgb_color: xyToRgb(xy), xy_color: [round(xy[0], 6), round(xy[1], 6)] };
  }
  const rgb = v as Rgb;
  return { hs_color: rgbToHs(rgb), rgb_color: rgb, xy_color: rgbToXy(rgb) };
}
