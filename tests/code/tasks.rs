//! The fixed multi-step tasks of the code-mode figures (tests/benches/code_mode.rs) and of the
//! real-model runs (tests/real_model/code.rs): 20 employees' expenses checked against their
//! departments' budgets, and the warmest of 10 cities tomorrow. Deterministic data, the answer
//! known, tools whose results are as verbose as real APIs' are.

#![allow(dead_code)]

use agent_toolkit::prelude::*;
use serde::Serialize;
use serde_json::{Value, json};

const NAMES: [&str; 20] = [
    "Ada", "Ben", "Cleo", "Dev", "Eli", "Fay", "Gus", "Hana", "Ivo", "Jun", "Kai", "Lea", "Max",
    "Nia", "Oto", "Pia", "Quin", "Rae", "Sol", "Tess",
];
const DEPARTMENTS: [&str; 4] = ["sales", "engineering", "support", "marketing"];
const ITEMS: [&str; 6] = [
    "flight",
    "hotel",
    "meals",
    "taxi",
    "conference fee",
    "software",
];

pub const CITIES: [&str; 10] = [
    "Oslo", "Lisbon", "Rome", "Cairo", "Tokyo", "Lima", "Nairobi", "Quito", "Perth", "Dublin",
];

#[derive(Clone, Serialize, schemars::JsonSchema)]
pub struct Employee {
    pub id: u32,
    pub name: String,
    pub department: String,
}

#[derive(Serialize, schemars::JsonSchema)]
pub struct Expense {
    pub date: String,
    pub category: String,
    pub description: String,
    pub amount_cents: i64,
    pub approved_by: String,
}

#[derive(Serialize, schemars::JsonSchema)]
pub struct Expenses {
    pub employee_id: u32,
    pub currency: String,
    pub items: Vec<Expense>,
    pub total_cents: i64,
}

#[derive(Serialize, schemars::JsonSchema)]
pub struct Budget {
    pub department: String,
    pub per_person_cents: i64,
    pub period: String,
}

#[derive(Serialize, schemars::JsonSchema)]
pub struct Day {
    pub date: String,
    pub high_c: i64,
    pub low_c: i64,
    pub conditions: String,
    pub wind_kph: i64,
    pub precipitation_mm: i64,
}

#[derive(Serialize, schemars::JsonSchema)]
pub struct Forecast {
    pub city: String,
    pub days: Vec<Day>,
}

pub fn employees() -> Vec<Employee> {
    NAMES
        .iter()
        .enumerate()
        .map(|(i, name)| Employee {
            id: 100 + i as u32,
            name: name.to_string(),
            department: DEPARTMENTS[i % 4].to_string(),
        })
        .collect()
}

fn expenses_of(employee_id: u32) -> Expenses {
    let seed = employee_id as i64;
    let items: Vec<Expense> = ITEMS
        .iter()
        .enumerate()
        .map(|(k, category)| {
            let amount = ((seed * 7919 + k as i64 * 104_729) % 60_000) + 5_000;
            Expense {
                date: format!("2026-10-{:02}", 1 + (seed as usize + k * 5) % 28),
                category: category.to_string(),
                description: format!("{category} for the Q4 customer visit, receipt attached"),
                amount_cents: amount,
                approved_by: "finance-bot".into(),
            }
        })
        .collect();
    let total_cents = items.iter().map(|i| i.amount_cents).sum();
    Expenses {
        employee_id,
        currency: "EUR".into(),
        items,
        total_cents,
    }
}

fn budget_of(department: &str) -> i64 {
    match department {
        "sales" => 200_000,
        "engineering" => 180_000,
        "support" => 190_000,
        _ => 210_000,
    }
}

fn forecast_of(city: &str) -> Forecast {
    let seed: i64 = city.bytes().map(i64::from).sum();
    let days = (0..7)
        .map(|d| {
            let high = (seed * 31 + d * 17) % 30 + 5;
            Day {
                date: format!("2026-11-{:02}", 27 + d % 4),
                high_c: high,
                low_c: high - 6 - (seed + d) % 5,
                conditions: ["sunny", "cloudy", "rain", "showers", "clear"]
                    [((seed + d) % 5) as usize]
                    .into(),
                wind_kph: (seed + d * 3) % 40,
                precipitation_mm: (seed * d) % 12,
            }
        })
        .collect();
    Forecast {
        city: city.to_string(),
        days,
    }
}

/// The staff list: id, name and department of every employee.
#[tool(read_only)]
pub fn list_employees() -> Json<Vec<Employee>> {
    Json(employees())
}

/// One employee's expense claims this quarter, item by item, with the total in cents.
#[tool(read_only)]
pub fn get_expenses(employee_id: u32) -> Result<Json<Expenses>, ToolError> {
    if !(100..120).contains(&employee_id) {
        return Err(ToolError::new(
            agent_toolkit::error::ToolErrorKind::Execution,
            format!("no employee {employee_id}"),
        ));
    }
    Ok(Json(expenses_of(employee_id)))
}

/// A department's expense budget per person this quarter, in cents.
#[tool(read_only)]
pub fn get_budget(department: String) -> Json<Budget> {
    Json(Budget {
        per_person_cents: budget_of(&department),
        department,
        period: "2026-Q4".into(),
    })
}

/// The 7-day forecast for a city: each day's high and low in °C, conditions, wind, rain.
/// The first day is tomorrow.
#[tool(read_only)]
pub fn get_forecast(city: String) -> Json<Forecast> {
    Json(forecast_of(&city))
}

pub fn toolkit() -> Toolkit {
    Toolkit::builder()
        .register(ListEmployees)
        .register(GetExpenses)
        .register(GetBudget)
        .register(GetForecast)
        .build()
        .expect("task toolkit")
}

/// Names of the employees over their department's budget, in staff-list order.
pub fn over_budget() -> Vec<String> {
    employees()
        .into_iter()
        .filter(|e| expenses_of(e.id).total_cents > budget_of(&e.department))
        .map(|e| e.name)
        .collect()
}

/// The city with the highest forecast high tomorrow.
pub fn warmest_tomorrow() -> String {
    CITIES
        .iter()
        .max_by_key(|c| forecast_of(c).days[0].high_c)
        .expect("cities")
        .to_string()
}

/// One task: its question, what a correct answer contains, and how a model solves it.
pub struct Task {
    pub name: &'static str,
    pub question: String,
    /// Every one of these appears in a correct answer.
    pub expected: Vec<String>,
    /// The program a model writes in code mode.
    pub program: &'static str,
    /// The calls a model makes calling tools directly, turn by turn when it calls in parallel.
    pub direct_turns: Vec<Vec<(&'static str, Value)>>,
}

pub const EXPENSES_PROGRAM: &str = r#"const staff = await tools.list_employees();
const departments = [...new Set(staff.map(e => e.department))];
const budgets = Object.fromEntries(await Promise.all(departments.map(async d => [d, (await tools.get_budget({ department: d })).per_person_cents])));
const claims = await Promise.all(staff.map(e => tools.get_expenses({ employee_id: e.id })));
const over = staff.filter((e, i) => claims[i].total_cents > budgets[e.department]);
return over.map(e => e.name);"#;

pub const FORECAST_PROGRAM: &str = r#"const cities = ["Oslo", "Lisbon", "Rome", "Cairo", "Tokyo", "Lima", "Nairobi", "Quito", "Perth", "Dublin"];
const forecasts = await Promise.all(cities.map(city => tools.get_forecast({ city })));
const best = forecasts.reduce((a, b) => b.days[0].high_c > a.days[0].high_c ? b : a);
return { city: best.city, high_c: best.days[0].high_c };"#;

pub fn tasks() -> Vec<Task> {
    let staff = employees();
    let mut departments: Vec<String> = staff.iter().map(|e| e.department.clone()).collect();
    departments.dedup();
    departments.sort();
    departments.dedup();
    vec![
        Task {
            name: "expenses (20 employees)",
            question: "Which employees spent more than their department's per-person budget this quarter? Answer with their names.".into(),
            expected: over_budget(),
            program: EXPENSES_PROGRAM,
            direct_turns: vec![
                vec![("list_employees", json!({}))],
                departments
                    .iter()
                    .map(|d| ("get_budget", json!({ "department": d })))
                    .collect(),
                staff
                    .iter()
                    .map(|e| ("get_expenses", json!({ "employee_id": e.id })))
                    .collect(),
            ],
        },
        Task {
            name: "forecasts (10 cities)",
            question: format!(
                "Which of these cities will be warmest tomorrow: {}? Answer with the city.",
                CITIES.join(", ")
            ),
            expected: vec![warmest_tomorrow()],
            program: FORECAST_PROGRAM,
            direct_turns: vec![CITIES
                .iter()
                .map(|c| ("get_forecast", json!({ "city": c })))
                .collect()],
        },
    ]
}

/// A smaller task for the real model: the warmest of three cities.
pub fn three_cities() -> Task {
    let cities = ["Oslo", "Cairo", "Lima"];
    let warmest = cities
        .iter()
        .max_by_key(|c| forecast_of(c).days[0].high_c)
        .expect("cities")
        .to_string();
    Task {
        name: "forecasts (3 cities)",
        question: "Which of Oslo, Cairo and Lima will be warmest tomorrow? Answer with the city."
            .into(),
        expected: vec![warmest],
        program: r#"const cities = ["Oslo", "Cairo", "Lima"];
const forecasts = await Promise.all(cities.map(city => tools.get_forecast({ city })));
return forecasts.reduce((a, b) => b.days[0].high_c > a.days[0].high_c ? b : a).city;"#,
        direct_turns: vec![
            cities
                .iter()
                .map(|c| ("get_forecast", json!({ "city": c })))
                .collect(),
        ],
    }
}
