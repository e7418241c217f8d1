import { defineChaosSuite } from './chaos/suite';

defineChaosSuite('discord');
