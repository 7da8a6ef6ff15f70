import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  type ChartConfiguration,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Title,
  Tooltip,
} from 'chart.js';
import { useEffect, useRef } from 'preact/hooks';

Chart.register(
  BarController,
  BarElement,
  LineController,
  LineElement,
  PointElement,
  CategoryScale,
  LinearScale,
  Legend,
  Tooltip,
  Title,
);
Chart.defaults.font.family = 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
Chart.defaults.color = '#3a3f47';
Chart.defaults.animation = false;

export interface Series {
  label: string;
  data: number[];
  color: string;
  /** Bars of the same stack sit on top of each other. */
  stack?: string;
}

export interface ChartProps {
  kind: 'bar' | 'line';
  /** Read by screen readers in place of the picture; the page also shows the figures as a table. */
  summary: string;
  labels: string[];
  series: Series[];
  /** Axis titles, with their units: "accelerators", "jobs per 15 min". */
  xTitle: string;
  yTitle: string;
  horizontal?: boolean;
  stacked?: boolean;
  height?: number;
  /** Whole-number ticks (counts); false for hours and money. Default true. */
  integer?: boolean;
}

/**
 * A Chart.js chart: created once, updated in place when the data change (live refresh without flicker),
 * destroyed with the component. Axes always carry their titles (units).
 */
export function ChartView(props: ChartProps) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const chart = useRef<Chart | null>(null);

  useEffect(() => {
    const datasets = props.series.map((s) => ({
      label: s.label,
      data: s.data,
      backgroundColor: s.color,
      borderColor: s.color,
      stack: s.stack,
      borderWidth: props.kind === 'line' ? 2 : 0,
      pointRadius: props.kind === 'line' ? 2 : 0,
    }));
    const valueAxis = {
      beginAtZero: true,
      stacked: props.stacked ?? false,
      title: { display: true, text: props.horizontal ? props.xTitle : props.yTitle },
      ticks: props.integer === false ? {} : { precision: 0 },
    };
    const categoryAxis = {
      stacked: props.stacked ?? false,
      title: { display: true, text: props.horizontal ? props.yTitle : props.xTitle },
      ticks: { autoSkip: true, maxRotation: 0 },
    };
    if (chart.current && (chart.current.config as ChartConfiguration).type === props.kind) {
      chart.current.data.labels = props.labels;
      chart.current.data.datasets = datasets;
      chart.current.update();
      return;
    }
    chart.current?.destroy();
    chart.current = new Chart(canvas.current!, {
      type: props.kind,
      data: { labels: props.labels, datasets },
      options: {
        indexAxis: props.horizontal ? 'y' : 'x',
        responsive: true,
        maintainAspectRatio: false,
        interaction: { mode: 'index', intersect: false },
        plugins: { legend: { position: 'bottom', labels: { boxWidth: 12 } } },
        scales: props.horizontal ? { x: valueAxis, y: categoryAxis } : { x: categoryAxis, y: valueAxis },
      },
    });
  }, [
    props.kind,
    props.labels,
    props.series,
    props.horizontal,
    props.stacked,
    props.xTitle,
    props.yTitle,
    props.integer,
  ]);

  useEffect(
    () => () => {
      chart.current?.destroy();
      chart.current = null;
    },
    [],
  );

  return (
    <div class="chart" style={{ height: `${props.height ?? 260}px` }}>
      <canvas ref={canvas} role="img" aria-label={props.summary}>
        {props.summary}
      </canvas>
    </div>
  );
}
