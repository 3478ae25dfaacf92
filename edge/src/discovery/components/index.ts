import {
  binarySensorComponent,
  buttonComponent,
  numberComponent,
  selectComponent,
  sensorComponent,
  switchComponent,
} from './basic.ts';
import { climateComponent, fanComponent } from './climate-fan.ts';
import { coverComponent, lockComponent } from './cover-lock.ts';
import { eventComponent, sceneComponent, sirenComponent, updateComponent } from './extra.ts';
import { lightComponent } from './light.ts';
import type { Component } from './types.ts';

export const COMPONENTS: Record<string, Component> = Object.fromEntries(
  [
    lightComponent,
    switchComponent,
    sensorComponent,
    binarySensorComponent,
    coverComponent,
    lockComponent,
    climateComponent,
    fanComponent,
    buttonComponent,
    numberComponent,
    selectComponent,
    eventComponent,
    sirenComponent,
    updateComponent,
    sceneComponent,
  ].map((c) => [c.domain, c]),
);

export type { Component } from './types.ts';
