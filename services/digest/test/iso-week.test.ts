import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError } from '@support-agent/shared';
import {
  isoWeekName,
  lastCompleteWeek,
  parseIsoDate,
  requireWeekStart,
  weekEndInstant,
  weekEndOf,
  weekStartOf,
} from '../src/domain/iso-week.js';
import { dueWeek, scheduleOffsetMinutes } from '../src/domain/schedule.js';

const at = (iso: string) => new Date(iso);

function assertWeekStartError(text: string, now: Date, message: RegExp): void {
  assert.throws(
    () => requireWeekStart(text, now),
    (err: unknown) =>
      err instanceof AppError &&
      err.code === 'invalid_request' &&
      err.param === 'week_start' &&
      message.test(err.message),
  );
}

describe('ISO weeks (UTC)', () => {
  it('when an instant is on a Sunday at 23:59:59.999, then it belongs to the week that started the Monday before', () => {
    assert.equal(weekStartOf(at('2026-11-22T23:59:59.999Z')), '2026-11-16');
  });

  it('when an instant is on Monday at 00:00:00.000, then it starts a new week', () => {
    assert.equal(weekStartOf(at('2026-11-23T00:00:00.000Z')), '2026-11-23');
    assert.equal(weekStartOf(at('2026-11-22T23:59:59.999Z')), '2026-11-16');
  });

  it('when the time zone offset would move the date, then UTC decides the week', () => {
    // 2026-11-23 00:30 in Berlin is still Sunday in UTC.
    assert.equal(weekStartOf(at('2026-11-23T00:30:00+01:00')), '2026-11-16');
  });

  it('when a week spans New Year, then its Monday is in December and its ISO name follows the Thursday', () => {
    assert.equal(weekStartOf(at('2021-01-03T12:00:00Z')), '2020-12-28'); // Sunday of 2020-W53
    assert.equal(isoWeekName('2020-12-28'), '2020-W53');
    assert.equal(weekStartOf(at('2026-01-01T00:00:00Z')), '2025-12-29'); // Thursday: week 1 of 2026
    assert.equal(isoWeekName('2025-12-29'), '2026-W01');
    assert.equal(weekStartOf(at('2024-12-31T23:59:59.999Z')), '2024-12-30');
    assert.equal(isoWeekName('2024-12-30'), '2025-W01');
    assert.equal(isoWeekName('2026-11-16'), '2026-W47');
  });

  it('when a week is named, then its end is the Sunday six days later, also across months and leap days', () => {
    assert.equal(weekEndOf('2026-11-16'), '2026-11-22');
    assert.equal(weekEndOf('2024-02-26'), '2024-03-03');
    assert.equal(weekEndOf('2020-12-28'), '2021-01-03');
    assert.equal(weekEndInstant('2026-11-16').toISOString(), '2026-11-23T00:00:00.000Z');
  });

  it('when asked for the last complete week, then it is the week before the current one, even late on Sunday', () => {
    assert.equal(lastCompleteWeek(at('2026-11-22T23:59:59.999Z')), '2026-11-09');
    assert.equal(lastCompleteWeek(at('2026-11-23T00:00:00.000Z')), '2026-11-16');
    assert.equal(lastCompleteWeek(at('2027-01-01T00:00:00Z')), '2026-12-21');
  });

  it('when dates are not real calendar dates, then they do not parse', () => {
    assert.equal(parseIsoDate('2026-02-30'), undefined);
    assert.equal(parseIsoDate('2026-1-5'), undefined);
    assert.equal(parseIsoDate('2024-02-29')?.toISOString(), '2024-02-29T00:00:00.000Z');
  });
});

describe('week_start validation', () => {
  const now = at('2026-11-20T12:00:00Z'); // Friday of the week starting 2026-11-16

  it('when week_start is a past or the current Monday, then it is accepted', () => {
    assert.equal(requireWeekStart('2026-11-09', now), '2026-11-09');
    assert.equal(requireWeekStart('2026-11-16', now), '2026-11-16');
    assert.equal(requireWeekStart(' 2020-12-28 ', now), '2020-12-28');
  });

  it('when week_start is not YYYY-MM-DD, then invalid_request names week_start', () => {
    for (const bad of [
      '2026/11/16',
      '16-11-2026',
      'last week',
      '2026-11-16T00:00:00Z',
      '',
      '2026-02-30',
    ]) {
      assertWeekStartError(bad, now, /YYYY-MM-DD/);
    }
  });

  it('when week_start is not a Monday, then invalid_request says so', () => {
    assertWeekStartError('2026-11-15', now, /Monday/);
    assertWeekStartError('2026-11-17', now, /Monday/);
  });

  it('when week_start is after the current week, then invalid_request says it is in the future', () => {
    assertWeekStartError('2026-11-23', now, /future/);
    assertWeekStartError('2030-01-07', now, /future/);
  });
});

describe('weekly schedule', () => {
  it('when configured as Monday 00:05, then the offset is five minutes after the week ends', () => {
    assert.equal(scheduleOffsetMinutes('mon', '00:05'), 5);
    assert.equal(scheduleOffsetMinutes('wed', '13:30'), 2 * 1440 + 13 * 60 + 30);
  });

  it('when the run time of last week has passed, then last week is due; just before, the week before it', () => {
    const offset = scheduleOffsetMinutes('mon', '00:05');
    assert.deepEqual(dueWeek(at('2026-11-23T00:05:00Z'), offset), {
      weekStart: '2026-11-16',
      dueAt: at('2026-11-23T00:05:00Z'),
    });
    assert.deepEqual(dueWeek(at('2026-11-23T00:04:59.999Z'), offset), {
      weekStart: '2026-11-09',
      dueAt: at('2026-11-16T00:05:00Z'),
    });
    assert.equal(dueWeek(at('2026-11-22T23:59:59Z'), offset).weekStart, '2026-11-09');
  });

  it('when the run is late in the week (Sunday 23:00), then the week before last is due until then', () => {
    const offset = scheduleOffsetMinutes('sun', '23:00');
    assert.equal(dueWeek(at('2026-11-29T22:59:00Z'), offset).weekStart, '2026-11-09');
    assert.equal(dueWeek(at('2026-11-29T23:00:00Z'), offset).weekStart, '2026-11-16');
  });
});
